// Issue 27, deliverable 6: prompt-cache writes are billed at what the
// provider charges for them, not as plain input. Anthropic reports
// `cache_creation_input_tokens` and, in newer API versions, the split
// `cache_creation: {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`;
// it charges 1.25× the input price for 5-minute writes and 2× for 1-hour
// ones. The gateway converts each kind to unified tokens at the deployment's
// factor (defaults 1.25 and 2 × its input factor; an unsplit count is
// 5-minute, Anthropic's default TTL), each rounded up on its own, into the
// input cache-miss tier; the six tiers stay. The worst case reserves input at
// the write factor when the body can write the cache.
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogFile, usageRecord } from '../../support/data-plane';
import { startFakeAnthropic, type FakeReply, type FakeUpstream } from '../../support/fake-upstreams';
import { micros } from './billing-support';

const ENV = { CACHE_ANTHROPIC_KEY: 'sk-ant-cache' };

describe('billing: cache writes at what the provider charges', function () {
  this.timeout(60_000);
  let t: TestApp;
  let anthropic: FakeUpstream;
  let key: string;

  before(async () => {
    anthropic = await startFakeAnthropic();
    const all = (route: Record<string, unknown>) => ({ light: [route], standard: [route], heavy: [route], thinking: [route] });
    t = await startTestApp({
      env: ENV,
      catalog: catalogFile({
        providers: { claude: { type: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'CACHE_ANTHROPIC_KEY' } },
        models: [
          { name: 'm-default', routes: all({ provider: 'claude', model: 'claude-up' }) },
          // A deployment whose catalog states its own factors: input 2, 5-minute writes 3, 1-hour writes 5.
          { name: 'm-stated', routes: all({ provider: 'claude', model: 'claude-up', unify: { input: 2, cache_write_5m: 3, cache_write_1h: 5 } }) },
        ],
      }),
    });
    key = (await createKey(t, (await createAccount(t)).token, { model_scope: ['m-default', 'm-stated'] })).api_key;
  });

  after(async () => {
    await t?.close();
    await anthropic?.close();
  });

  async function call(model: string, reply: FakeReply, stream = false, extra: Record<string, unknown> = {}) {
    anthropic.script(reply);
    const response = await fetch(`${t.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model,
        max_tokens: 256,
        stream,
        system: [{ type: 'text', text: 'You are a careful assistant.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        messages: [{ role: 'user', content: 'Hello.' }],
        ...extra,
      }),
    });
    const text = await response.text();
    expect(response.status, text).to.equal(200);
    const usage = stream
      ? JSON.parse(text.split('\n\n').findLast((block) => block.startsWith('event: message_delta'))!.split('data: ')[1]!).usage
      : JSON.parse(text).usage;
    return { record: await usageRecord(response.headers.get('request-id')!), usage };
  }

  const split = { input: 100, cacheCreation: 300, cacheCreationSplit: { ephemeral5m: 100, ephemeral1h: 200 }, cacheRead: 50, output: 10 };

  for (const stream of [false, true]) {
    it(`both TTLs${stream ? ' (streamed)' : ''}: 100 plain + 100 five-minute × 1.25 + 200 one-hour × 2 = 625 unified miss tokens`, async () => {
      const { record, usage } = await call('m-default', { usage: split, cumulativeDeltaUsage: true }, stream);
      expect(Number(record.raw_input_cache_miss), 'raw: input plus every write').to.equal(400);
      expect(Number(record.tokens_input_cache_miss)).to.equal(100 + 125 + 400);
      expect(Number(record.tokens_input_cache_hit)).to.equal(50);
      // The miss tier at 2 (no_thinking.input_cache_miss), the hit tier at 0.5, output at 8.
      expect(Number(record.amount_input_cache_miss)).to.equal(625 * 2);
      expect(Number(record.amount_micros)).to.equal(625 * 2 + 50 * 0.5 + 10 * 8);
      // What the client is told is the same unified count.
      expect(usage).to.include({ input_tokens: 675, cached_input_tokens: 50, output_tokens: 10 });
    });
  }

  it('an unsplit count is 5-minute writes (Anthropic\'s default TTL), rounded up on its own: 100 + ⌈101 × 1.25⌉', async () => {
    const { record } = await call('m-default', { usage: { input: 100, cacheCreation: 101, output: 10 } });
    expect(Number(record.tokens_input_cache_miss)).to.equal(100 + 127);
  });

  it('a deployment\'s own factors: 100 × 2 + 100 × 3 + 200 × 5 = 1,500', async () => {
    const { record } = await call('m-stated', { usage: split });
    expect(Number(record.tokens_input_cache_miss)).to.equal(200 + 300 + 1_000);
    expect(Number(record.amount_input_cache_miss)).to.equal(1_500 * 2);
  });

  it('the worst case of a body that can write the cache is reserved at the write factor', async () => {
    const owner = await createAccount(t, { creditLimitMicros: t.app.services.catalog.minimalCallMicros });
    const limited = (await createKey(t, owner.token, { model_scope: ['m-default'] })).api_key;
    const long = 'Context. '.repeat(2_000);
    const worstOf = async (cacheControl: Record<string, unknown> | undefined) => {
      const response = await fetch(`${t.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': limited, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: 'm-default',
          max_tokens: 200_000,
          system: [{ type: 'text', text: long, ...(cacheControl ? { cache_control: cacheControl } : {}) }],
          messages: [{ role: 'user', content: 'Hello.' }],
        }),
      });
      const body: any = await response.json();
      expect(response.status).to.equal(429);
      return Number(micros(/worst case \(([\d.]+) CNY/.exec(body.error.message)![1]!));
    };
    const plain = await worstOf(undefined);
    const fiveMinutes = await worstOf({ type: 'ephemeral' });
    const oneHour = await worstOf({ type: 'ephemeral', ttl: '1h' });
    // The 18,000-byte system prompt alone is 36,000 micro-units as plain input: a quarter more, then twice.
    expect(fiveMinutes - plain).to.be.at.least(0.25 * 36_000);
    expect(oneHour - plain).to.be.at.least(36_000);
  });
});
