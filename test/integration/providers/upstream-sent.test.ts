// When is an upstream asked? Once the request's bytes were handed to its
// socket: from then on it charges the prompt, so a call cut before the first
// byte is billed for it (docs/architecture.md §10). A call cut before that costs nothing.
import http from 'node:http';
import { expect } from 'chai';
import { UpstreamError } from '../../../src/providers/provider';
import { SentRequest } from '../../../src/providers/sent-request';
import { UpstreamPool } from '../../../src/providers/upstream-http';
import { listenLocal, type LocalServer } from '../../support/local-server';
import { fakeDeployment } from '../../support/fake-upstreams';

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check(), what).to.equal(true);
}

describe('providers: whether a request reached its upstream', function () {
  this.timeout(30_000);
  let server: LocalServer;
  const received = { requests: 0, bodies: 0 };
  let readBodies = true;
  const pool = new UpstreamPool();

  before(async () => {
    // Answers nothing: a slow upstream still thinking about its first byte.
    const raw = http.createServer((req) => {
      received.requests++;
      if (!readBodies) return;
      req.resume();
      req.on('end', () => received.bodies++);
    });
    server = await listenLocal(raw);
  });
  after(async () => {
    pool.close();
    await server.close();
  });

  // Clocks far longer than the test: only the caller's abort ends these exchanges.
  const provider = fakeDeployment('anthropic', { connectTimeoutMs: 600_000, idleTimeoutMs: 600_000 }).provider;
  const open = (signal: AbortSignal, sent: SentRequest, body: unknown = { hello: 'upstream' }) =>
    pool.open({ url: `${server.origin}/v1/messages`, headers: { 'content-type': 'application/json' }, body, provider, signal, sent });

  it('a call cut before it was sent did not reach the upstream', async () => {
    const controller = new AbortController();
    controller.abort();
    const sent = new SentRequest();
    const error = await open(controller.signal, sent).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(UpstreamError).with.property('failure', 'aborted');
    expect(sent.reached).to.equal(false);
  });

  it('a request whose bytes went out reached it, though the caller leaves before the first byte', async () => {
    readBodies = true;
    const controller = new AbortController();
    const sent = new SentRequest();
    const before = received.bodies;
    const opening = open(controller.signal, sent).catch((e: unknown) => e);
    await until(() => received.bodies > before, 'the upstream read the whole request');
    expect(sent.reached).to.equal(true);
    controller.abort();
    expect(await opening).to.be.instanceOf(UpstreamError).with.property('failure', 'aborted');
    expect(sent.reached).to.equal(true);
  });

  it('a body the upstream never took in whole did not reach it: the cut costs nothing', async () => {
    readBodies = false;
    const controller = new AbortController();
    const sent = new SentRequest();
    const before = received.requests;
    // Far more than loopback socket buffers hold (up to 32 MB received, 4 MB sent), to an upstream that reads only the headers.
    const opening = open(controller.signal, sent, { prompt: 'x'.repeat(64 * 1024 * 1024) }).catch((e: unknown) => e);
    await until(() => received.requests > before, 'the upstream saw the request headers');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sent.reached).to.equal(false);
    controller.abort();
    expect(await opening).to.be.instanceOf(UpstreamError).with.property('failure', 'aborted');
    expect(sent.reached).to.equal(false);
  });
});
