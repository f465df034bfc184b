// A running stream ends with its key (issue 15): suspending or cancelling the
// key, or its account's settled usage reaching the credit limit, ends the
// stream at once with an `error` event naming why, and what was produced is
// metered. An account that only comes to its limit (issue 27: what the limit
// leaves cannot pay for a minimal useful call) lets running calls finish:
// each holds a reservation within the limit.
import { expect } from 'chai';
import { api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogFile, usageRecord } from '../../support/data-plane';
import { startFakeAnthropic, type FakeUpstream } from '../../support/fake-upstreams';

describe('security: streams end with their key', function () {
  this.timeout(60_000);
  let t: TestApp;
  let upstream: FakeUpstream;
  before(async () => {
    upstream = await startFakeAnthropic();
    t = await startTestApp({
      env: { SE_ANTHROPIC_KEY: 'sk-ant-se' },
      catalog: catalogFile({
        providers: { claude: { type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'SE_ANTHROPIC_KEY' } },
        models: [{ name: 'm-slow', routes: { light: [{ provider: 'claude', model: 'claude-slow' }] } }],
      }),
    });
  });
  after(async () => {
    await t?.close();
    await upstream?.close();
  });

  /** Starts a stream that would run ~10 s (100 words, 100 ms apart); resolves once its first text arrived. */
  async function startStream(apiKey: string): Promise<{ requestId: string; rest: Promise<{ text: string; ms: number }> }> {
    upstream.script({ text: Array.from({ length: 100 }, (_, i) => `word${i}`).join(' '), chunkDelayMs: 100 });
    const response = await fetch(`${t.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'm-slow', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).to.equal(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('text_delta')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const since = Date.now();
    const rest = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return { text, ms: Date.now() - since };
        text += decoder.decode(value, { stream: true });
      }
    })();
    return { requestId: response.headers.get('request-id')!, rest };
  }

  const cases: Array<[string, string, (token: string, keyId: string, accountId: string) => Promise<void>]> = [
    ['suspended', 'key_suspended', async (token, keyId) => void expect((await api(t, 'POST', `/api/v1/keys/${keyId}/suspend`, token)).status).to.equal(200)],
    ['cancelled', 'key_cancelled', async (token, keyId) => void expect((await api(t, 'DELETE', `/api/v1/keys/${keyId}`, token)).status).to.be.oneOf([200, 204])],
    [
      'over its account credit limit',
      'credit_limit_reached',
      async (_token, _keyId, accountId) => {
        // A limit below what the account has used: it is over at once.
        await t.app.services.accounts.setCreditLimit({ accountId, userId: null, label: 'test', role: 'owner', ip: null }, 1);
      },
    ],
  ];
  for (const [what, code, act] of cases) {
    it(`a key ${what} mid-stream ends the stream with an error event (${code}) and the produced text is metered`, async () => {
      const owner = await createAccount(t);
      const key = await createKey(t, owner.token, { model_scope: ['m-slow'] });
      // Something used this month, so a tiny limit is crossed.
      if (code === 'credit_limit_reached') {
        upstream.script({ text: 'warm-up reply' });
        const warm = await fetch(`${t.baseUrl}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key.api_key, 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ model: 'm-slow', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(warm.status).to.equal(200);
      }
      const stream = await startStream(key.api_key);
      await act(owner.token, key.api_key_id, owner.accountId);
      const { text, ms } = await stream.rest;
      expect(ms, 'ended soon after, not at the end of the ~10 s reply').to.be.below(5_000);
      expect(text).to.contain('event: error');
      expect(text.slice(text.lastIndexOf('event: error')), text.slice(-400)).to.match(/suspended|cancelled|credit limit/);
      expect(text).not.to.contain('word99');
      const record = await usageRecord(stream.requestId);
      expect(record.status).to.equal('upstream_error');
      expect(record.error_code).to.equal(code);
      expect(Number(record.tokens_output ?? 0)).to.be.greaterThan(0);
    });
  }

  it('an account that comes to its limit, not past it, lets a running stream finish while new calls get 429', async () => {
    const minimal = t.app.services.catalog.minimalCallMicros;
    const owner = await createAccount(t, { creditLimitMicros: 10 * minimal });
    const key = await createKey(t, owner.token, { model_scope: ['m-slow'] });
    upstream.script({ text: Array.from({ length: 20 }, (_, i) => `word${i}`).join(' '), chunkDelayMs: 50 });
    const response = await fetch(`${t.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.api_key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'm-slow', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).to.equal(200);
    const streamed = response.text();
    // Nothing settled yet; the limit now leaves less than a minimal useful call: at its limit, not over it.
    await t.app.services.accounts.setCreditLimit({ accountId: owner.accountId, userId: null, label: 'test', role: 'owner', ip: null }, minimal - 1);
    const refused = await fetch(`${t.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.api_key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'm-slow', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(refused.status).to.equal(429);
    expect(((await refused.json()) as any).error.message).to.match(/all its keys are suspended/);
    const text = await streamed;
    expect(text).to.contain('word19');
    expect(text).to.contain('event: message_stop');
    expect(text).not.to.contain('event: error');
    expect((await usageRecord(response.headers.get('request-id')!)).status).to.equal('ok');
    expect((await api(t, 'GET', `/api/v1/keys/${key.api_key_id}`, owner.token)).body).to.include({ status: 'suspended', suspended_reason: 'credit_limit' });
  });
});
