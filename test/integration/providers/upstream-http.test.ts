import http from 'node:http';
import { expect } from 'chai';
import { UpstreamError } from '../../../src/providers/provider';
import { UpstreamPool } from '../../../src/providers/upstream-http';
import type { ProviderConfig } from '../../../src/core/catalog.types';
import { listenLocal, type LocalServer } from '../../support/local-server';

// A plain (JSON) reply is read under the idle clock: silence longer than
// idleTimeoutMs fails the call, a slow body that keeps arriving does not.

describe('upstream HTTP: reading a plain reply under the idle clock', () => {
  let server: LocalServer;
  let pool: UpstreamPool;
  /** Pieces of the body and the pause before each. */
  let script: Array<[delayMs: number, text: string]> = [];

  before(async () => {
    server = await listenLocal(
      http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        void (async () => {
          for (const [delayMs, text] of script) {
            await new Promise((resolve) => setTimeout(resolve, delayMs));
            if (res.destroyed) return;
            res.write(text);
          }
          res.end();
        })();
      }),
    );
  });
  after(async () => server.close());
  beforeEach(() => {
    pool = new UpstreamPool();
  });
  afterEach(() => pool.close());

  const provider = { name: 'slow', connectTimeoutMs: 1_000, idleTimeoutMs: 150 } as ProviderConfig;
  const open = () => pool.open({ url: `${server.origin}/v1/messages`, headers: { 'content-type': 'application/json' }, body: {}, provider, signal: new AbortController().signal });

  it('fails with a timeout when the body stops arriving mid-way', async () => {
    script = [
      [0, '{"id":'],
      [400, '"late"}'],
    ];
    const exchange = await open();
    const started = Date.now();
    const error = await exchange.json().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    exchange.close();
    expect(error).to.be.instanceOf(UpstreamError);
    expect((error as UpstreamError).failure).to.equal('timeout');
    expect(Date.now() - started).to.be.within(100, 380);
  });

  it('keeps reading a body that arrives slowly but never falls silent for the idle timeout', async () => {
    script = [
      [0, '{"id":'],
      [100, '"a",'],
      [100, '"b":'],
      [100, '1}'],
    ];
    const exchange = await open();
    expect(await exchange.json()).to.deep.equal({ id: 'a', b: 1 });
    exchange.close();
  });
});
