// Issue 31, per-key rate limits: two gateway processes (apps) on one
// database hold one key's limits together. 200 calls at once, split between
// them, never pass the limit (the overshoot is measured and printed); a
// refusal is 429 `rate_limited` in the caller's protocol shape with the
// headers the official clients read, and their retries succeed once a slot
// frees; a limit changed or removed applies to the next call on both.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { BUILTIN_PRICES } from '../../src/routing/builtin-catalog';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../support/app';

const CALLS = 200;
/** Long enough for all 200 calls of a burst to arrive while the first ones run (two processes on a shared 2-core machine). */
const SLOW_MS = 4_000;
/** A call that holds a slot while an SDK's call is refused once. */
const HELD_MS = 500;

/** `m-fast` answers at once; `m-slow` after SLOW_MS and `m-held` after HELD_MS (calls that hold their concurrency slot that long). */
function catalog(): unknown {
  const tiers = (deployment: Record<string, unknown>) => ({ light: [deployment], standard: [deployment], heavy: [deployment], thinking: [deployment] });
  return {
    currency: 'CNY',
    prices: BUILTIN_PRICES,
    providers: {
      fast: { type: 'mock', mock: { latency_ms: 0, chunk_delay_ms: 0 } },
      slow: { type: 'mock', mock: { latency_ms: SLOW_MS, chunk_delay_ms: 0 } },
      held: { type: 'mock', mock: { latency_ms: HELD_MS, chunk_delay_ms: 0 } },
    },
    models: [
      { name: 'm-fast', display_name: 'Fast mock', routes: tiers({ provider: 'fast', model: 'fast' }) },
      { name: 'm-slow', display_name: 'Slow mock', routes: tiers({ provider: 'slow', model: 'slow' }) },
      { name: 'm-held', display_name: 'Held mock', routes: tiers({ provider: 'held', model: 'held' }) },
    ],
  };
}

/** Waits until at least 15 s are left in the current UTC minute, so a burst falls in one window. */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await delay(left + 200);
}

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function messages(app: TestApp, secret: string, model: string, maxTokens = 16): Promise<Answer> {
  const response = await fetch(`${app.baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': secret, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: maxTokens, messages: [{ role: 'user', content: 'Name three rivers in Europe.' }] }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function chat(app: TestApp, secret: string, model: string): Promise<Answer> {
  const response = await fetch(`${app.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Name three rivers in Europe.' }] }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

describe('e2e: per-key rate limits across two gateway processes', function () {
  this.timeout(120_000);
  let app1: TestApp;
  let app2: TestApp;
  let owner: TestAccount;

  before(async () => {
    app1 = await startTestApp({ catalog: catalog() });
    app2 = await startTestApp({ catalog: catalog() });
    owner = await createAccount(app1);
  });

  after(async () => {
    await app2?.close();
    await app1?.close();
  });

  const keyWith = (rateLimit: unknown) => createKey(app1, owner.token, { model_scope: ['m-fast', 'm-slow', 'm-held'], rate_limit: rateLimit });
  const setLimit = async (keyId: string, rateLimit: unknown): Promise<void> => {
    const updated = await api(app1, 'PUT', `/api/v1/keys/${keyId}`, owner.token, { rate_limit: rateLimit });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect(updated.body.rate_limit).to.deep.equal(rateLimit);
  };
  const burst = (secret: string, model: string, maxTokens?: number) =>
    Promise.all(Array.from({ length: CALLS }, (_, i) => messages(i % 2 ? app2 : app1, secret, model, maxTokens)));

  it('requests per minute: 200 calls at once through both processes answer exactly the limit; refusals carry rate_limited, retry-after and x-ratelimit-*', async () => {
    await awayFromMinuteEnd();
    const key = await keyWith({ requests_per_minute: 30, tokens_per_minute: null, concurrent_requests: null });
    expect(key.rate_limit).to.deep.equal({ requests_per_minute: 30, tokens_per_minute: null, concurrent_requests: null });
    const answers = await burst(key.api_key, 'm-fast');
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    process.stdout.write(`      requests: ${ok.length} answered of a limit of 30 across two processes (overshoot ${ok.length - 30}), ${refused.length} refused\n`);
    expect(ok.length + refused.length).to.equal(CALLS);
    expect(ok.length).to.equal(30);
    const refusal = refused[0]!;
    expect(refusal.body).to.deep.include({ type: 'error' });
    expect(refusal.body.error.type).to.equal('rate_limit_error');
    expect(refusal.body.error.message).to.contain('30 requests per minute');
    expect(Number(refusal.headers.get('retry-after'))).to.be.within(1, 60);
    expect(refusal.headers.get('x-should-retry')).to.equal('true');
    expect(refusal.headers.get('x-ratelimit-limit-requests')).to.equal('30');
    expect(refusal.headers.get('x-ratelimit-remaining-requests')).to.equal('0');
    expect(refusal.headers.get('x-ratelimit-reset-requests')).to.match(/^\d+s$/);
    // Answers carry the budget too.
    expect(ok[0]!.headers.get('x-ratelimit-limit-requests')).to.equal('30');
    expect(Number(ok[0]!.headers.get('x-ratelimit-remaining-requests'))).to.be.within(0, 29);
    // The OpenAI shape, with the code.
    const openai = await chat(app2, key.api_key, 'm-fast');
    expect(openai.status).to.equal(429);
    expect(openai.body.error.code).to.equal('rate_limited');
    expect(openai.body.error.type).to.equal('rate_limit_error');
  });

  it('tokens per minute: worst cases are reserved across both processes, the metered tokens never pass the limit, and what calls did not use is budget again', async () => {
    await awayFromMinuteEnd();
    const limit = 4_000;
    const key = await keyWith({ requests_per_minute: null, tokens_per_minute: limit, concurrent_requests: null });
    const first = await burst(key.api_key, 'm-fast', 600);
    const ok = first.filter((a) => a.status === 200);
    expect(first.filter((a) => a.status !== 200 && a.status !== 429)).to.deep.equal([]);
    const used = ok.reduce((n, a) => n + a.body.usage.input_tokens + a.body.usage.output_tokens, 0);
    // Calls that ended gave back what they did not use (a mock answer is a few dozen tokens of a worst case of about 700), so later calls of the burst fit too.
    process.stdout.write(`      tokens: ${ok.length} answered (worst case about 700 each), ${used} tokens metered against a limit of ${limit} (overshoot ${Math.max(0, used - limit)})\n`);
    expect(ok.length).to.be.greaterThan(Math.floor(limit / 700));
    expect(used).to.be.at.most(limit);
    expect(first.some((a) => a.status === 429)).to.equal(true);
    expect(first.find((a) => a.status === 429)!.headers.get('x-ratelimit-limit-tokens')).to.equal(String(limit));
    // Calls that run keep their worst case reserved until they end: at most 5 of about 700 fit 4 000 at once.
    const other = await keyWith({ requests_per_minute: null, tokens_per_minute: limit, concurrent_requests: null });
    const held = await burst(other.api_key, 'm-slow', 600);
    const heldOk = held.filter((a) => a.status === 200).length;
    expect(heldOk).to.be.within(1, 5);
  });

  it('concurrent requests: 200 slow calls at once through both processes run at most the limit; the official clients retry after the slot frees', async () => {
    const key = await keyWith({ requests_per_minute: null, tokens_per_minute: null, concurrent_requests: 3 });
    const answers = await burst(key.api_key, 'm-slow');
    const ok = answers.filter((a) => a.status === 200).length;
    process.stdout.write(`      concurrency: ${ok} of 200 slow calls ran at once against a limit of 3 (overshoot ${Math.max(0, ok - 3)})\n`);
    expect(ok).to.equal(3);
    const refusal = answers.find((a) => a.status === 429)!;
    expect(refusal.headers.get('retry-after')).to.equal('1');
    expect(refusal.body.error.message).to.contain('3 concurrent requests');

    // One slot, held by a call through app 1; each SDK through app 2 is refused, waits the retry-after and gets in.
    await setLimit(key.api_key_id, { requests_per_minute: null, tokens_per_minute: null, concurrent_requests: 1 });
    const anthropic = new Anthropic({ baseURL: app2.baseUrl, apiKey: key.api_key, maxRetries: 2 });
    const holding = messages(app1, key.api_key, 'm-held');
    await delay(50);
    const started = performance.now();
    const viaAnthropic = await anthropic.messages.create({ model: 'm-fast', max_tokens: 16, messages: [{ role: 'user', content: 'ping' }] }).withResponse();
    expect(viaAnthropic.data.content.length).to.be.greaterThan(0);
    expect(performance.now() - started, 'the client waited for its retry').to.be.above(400);
    expect((await holding).status).to.equal(200);

    const openai = new OpenAI({ baseURL: `${app2.baseUrl}/v1`, apiKey: key.api_key, maxRetries: 2 });
    const holding2 = messages(app1, key.api_key, 'm-held');
    await delay(50);
    const viaOpenAI = await openai.chat.completions.create({ model: 'm-fast', max_tokens: 16, messages: [{ role: 'user', content: 'ping' }] });
    expect(viaOpenAI.choices[0]!.message.content).to.be.a('string');
    expect((await holding2).status).to.equal(200);

    // Without retries the client sees the typed error.
    const noRetry = new OpenAI({ baseURL: `${app2.baseUrl}/v1`, apiKey: key.api_key, maxRetries: 0 });
    const holding3 = messages(app1, key.api_key, 'm-held');
    await delay(50);
    const error = await noRetry.chat.completions.create({ model: 'm-fast', max_tokens: 16, messages: [{ role: 'user', content: 'ping' }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('x-should-retry')).to.equal('true');
    await holding3;
  });

  it('a limit set to null applies at once on both processes', async () => {
    await awayFromMinuteEnd();
    const key = await keyWith({ requests_per_minute: 1, tokens_per_minute: null, concurrent_requests: null });
    expect((await messages(app2, key.api_key, 'm-fast')).status).to.equal(200);
    expect((await messages(app2, key.api_key, 'm-fast')).status).to.equal(429);
    await setLimit(key.api_key_id, null);
    const after = await messages(app2, key.api_key, 'm-fast');
    expect(after.status).to.equal(200);
    expect(after.headers.get('x-ratelimit-limit-requests')).to.equal(null);
  });
});
