// Shared by the HTTP provider tests (not a spec file): a fresh fake upstream
// for every test, and a call to the adapter under test pointed at it.
import type { CanonicalEvent } from '../../../src/core/canonical';
import type { ProviderAdapter } from '../../../src/providers/provider';
import type { ProviderType } from '../../../src/core/catalog.types';
import { canonicalRequest, fakeDeployment, type FakeDeploymentOptions, type FakeUpstream } from '../../support/fake-upstreams';

export interface FakeUpstreamHarness {
  /** Always the running test's fake upstream (each test starts its own). */
  upstream: FakeUpstream;
  /** Streams a canonical request (with `overrides`) through the adapter to that upstream, serving the harness's model unless `options` say otherwise. */
  call: (overrides?: Parameters<typeof canonicalRequest>[0], options?: FakeDeploymentOptions, signal?: AbortSignal) => AsyncIterable<CanonicalEvent>;
}

/** Registers the hooks that start and stop a fake upstream around each test; call it inside a `describe`. */
export function withFakeUpstream(
  adapter: ProviderAdapter,
  type: Exclude<ProviderType, 'mock'>,
  start: () => Promise<FakeUpstream>,
  model: string,
): FakeUpstreamHarness {
  let current: FakeUpstream | undefined;
  beforeEach(async () => {
    current = await start();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });

  const running = (): FakeUpstream => {
    if (!current) throw new Error('withFakeUpstream: the fake upstream runs only during a test');
    return current;
  };
  // A stable handle the tests can destructure once, forwarding to this test's upstream.
  const upstream: FakeUpstream = {
    get baseUrl() {
      return running().baseUrl;
    },
    get origin() {
      return running().origin;
    },
    get requests() {
      return running().requests;
    },
    script: (...replies) => running().script(...replies),
    unscript: () => running().unscript(),
    close: () => running().close(),
  };

  return {
    upstream,
    call: (overrides = {}, options = {}, signal = new AbortController().signal) => {
      const deployment = fakeDeployment(type, { baseUrl: upstream.baseUrl, model, ...options });
      return adapter.stream({ request: canonicalRequest(overrides), deployment, signal, dropped: [] });
    },
  };
}
