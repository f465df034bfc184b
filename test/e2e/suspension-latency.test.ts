// docs/architecture.md §11: key state changes take effect at once on every instance. Two
// gateway processes (apps) share one database; a key suspended through the
// first one's REST API must be refused by the second within 100 ms, although
// the second has the key in its cache from a successful call.
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { api, createAccount, createKey, startTestApp, type TestApp } from '../support/app';
import { e2eCatalog } from './e2e-support';

const POLL_EVERY_MS = 5;
const GIVE_UP_MS = 2_000;
const LIMIT_MS = 100;

type Outcome = 'accepted' | 'refused';

describe('e2e: suspension reaches a second instance at once', function () {
  this.timeout(30_000);
  let app1: TestApp;
  let app2: TestApp;

  before(async () => {
    app1 = await startTestApp({ catalog: e2eCatalog() });
    app2 = await startTestApp({ catalog: e2eCatalog() });
  });

  after(async () => {
    await app2?.close();
    await app1?.close();
  });

  async function call(client: Anthropic): Promise<Outcome> {
    try {
      await client.messages.create({ model: 'm-mock', max_tokens: 16, messages: [{ role: 'user', content: 'ping' }] });
      return 'accepted';
    } catch (error) {
      if (error instanceof Anthropic.PermissionDeniedError) return 'refused';
      throw error;
    }
  }

  /** Calls every 5 ms until the outcome is `wanted`; returns ms since `since` and the calls it took. */
  async function until(client: Anthropic, wanted: Outcome, since: number): Promise<{ ms: number; calls: number }> {
    for (let calls = 1; ; calls++) {
      if ((await call(client)) === wanted) return { ms: performance.now() - since, calls };
      if (performance.now() - since > GIVE_UP_MS) throw new Error(`app 2 still not ${wanted} after ${GIVE_UP_MS} ms`);
      await delay(POLL_EVERY_MS);
    }
  }

  it('app 2 refuses a key suspended through app 1 within 100 ms, and accepts it again after resume', async () => {
    const owner = await createAccount(app1);
    const key = await createKey(app1, owner.token, { model_scope: ['m-mock'] });
    const viaApp2 = new Anthropic({ baseURL: app2.baseUrl, apiKey: key.api_key, maxRetries: 0 });

    // A successful call through app 2 puts the key in app 2's cache.
    expect(await call(viaApp2)).to.equal('accepted');
    expect(await call(viaApp2)).to.equal('accepted');

    const requested = performance.now();
    const suspended = await api(app1, 'POST', `/api/v1/keys/${key.api_key_id}/suspend`, owner.token);
    const committed = performance.now();
    expect(suspended.status).to.equal(200);
    expect(suspended.body.status).to.equal('suspended');
    const refused = await until(viaApp2, 'refused', committed);

    const resumeRequested = performance.now();
    const resumed = await api(app1, 'POST', `/api/v1/keys/${key.api_key_id}/resume`, owner.token);
    const resumeCommitted = performance.now();
    expect(resumed.status).to.equal(200);
    const accepted = await until(viaApp2, 'accepted', resumeCommitted);

    process.stdout.write(
      `      suspension latency app 1 → app 2: ${refused.ms.toFixed(1)} ms after the suspend reply, ${refused.calls} call(s) ` +
        `(${(committed - requested + refused.ms).toFixed(1)} ms after the request); ` +
        `resume: ${accepted.ms.toFixed(1)} ms, ${accepted.calls} call(s) (${(resumeCommitted - resumeRequested + accepted.ms).toFixed(1)} ms)\n`,
    );
    expect(refused.ms).to.be.lessThan(LIMIT_MS);
    expect(accepted.ms).to.be.lessThan(LIMIT_MS);
  });
});
