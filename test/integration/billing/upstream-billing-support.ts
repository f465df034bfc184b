// Helpers for the tests of what a call that reached its upstream is billed
// (not a spec file): a gateway in front of the three fake upstreams and the
// built-in mock, request bodies in the three forms, and the usage record a
// key's call left behind.
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { BUILTIN_PRICES } from '../../../src/routing/builtin-catalog';
import { createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { startFakeAnthropic, startFakeOpenAI, startFakeOpenAIResponses, type FakeUpstream } from '../../support/fake-upstreams';

export type Form = 'messages' | 'chat' | 'responses';
export type Upstream = 'anthropic' | 'openai' | 'responses' | 'mock';

export const PATH: Record<Form, string> = { messages: '/v1/messages', chat: '/v1/chat/completions', responses: '/v1/responses' };

/** The catalog model that routes to each upstream. */
export const MODEL: Record<Upstream, string> = { anthropic: 'b-claude', openai: 'b-gpt', responses: 'b-resp', mock: 'b-sim' };
/** A mock that takes 30 s to say anything (aborts before its first byte), and one that drips its reply (aborts mid-stream). */
export const SLOW_MOCK = 'b-sim-slow';

/** A model whose upstream model name is not Latin-1. */
export const UNICODE_MODEL = 'b-unicode';

/** The OpenAI deployment's input factor, so the estimated input is seen to be unified too. */
export const GPT_INPUT_UNIFY = 1.5;

/** Every form against the upstreams it can reach: both network protocols and the mock, and the Responses API for its own form. */
export const PAIRS: ReadonlyArray<readonly [Form, Upstream]> = [
  ['messages', 'anthropic'],
  ['messages', 'openai'],
  ['messages', 'mock'],
  ['chat', 'anthropic'],
  ['chat', 'openai'],
  ['chat', 'mock'],
  ['responses', 'anthropic'],
  ['responses', 'openai'],
  ['responses', 'responses'],
  ['responses', 'mock'],
];

export const SYSTEM = 'You answer in one short sentence.';

export interface BillingGateway {
  t: TestApp;
  owner: TestAccount;
  fakes: Record<'anthropic' | 'openai' | 'responses', FakeUpstream>;
  /** A new key on every model (one per test, so its records are the test's own). */
  key(): Promise<{ secret: string; id: string }>;
  close(): Promise<void>;
}

export async function startBillingGateway(env: Record<string, string> = {}): Promise<BillingGateway> {
  const fakes = { anthropic: await startFakeAnthropic(), openai: await startFakeOpenAI(), responses: await startFakeOpenAIResponses() };
  const http = (type: string, baseUrl: string, extra: Record<string, unknown> = {}) => ({
    type,
    base_url: baseUrl,
    api_key_env: 'BILLING_UPSTREAM_KEY',
    connect_timeout_ms: 30_000,
    idle_timeout_ms: 30_000,
    ...extra,
  });
  const every = (route: Record<string, unknown>) => ({ light: [route], standard: [route], heavy: [route], thinking: [route] });
  const catalog = {
    currency: 'CNY',
    prices: BUILTIN_PRICES,
    providers: {
      claude: http('anthropic', fakes.anthropic.baseUrl),
      gpt: http('openai', fakes.openai.baseUrl),
      resp: http('openai', fakes.responses.baseUrl, { responses: true }),
      drip: { type: 'mock', mock: { latency_ms: 0, chunk_delay_ms: 150, chunk_chars: 6 } },
      slow: { type: 'mock', mock: { latency_ms: 30_000 } },
    },
    models: [
      { name: MODEL.anthropic, display_name: 'claude', routes: every({ provider: 'claude', model: 'claude-up' }) },
      { name: MODEL.openai, display_name: 'gpt', routes: every({ provider: 'gpt', model: 'gpt-up', unify: { input: GPT_INPUT_UNIFY } }) },
      { name: MODEL.responses, display_name: 'responses', routes: every({ provider: 'resp', model: 'gpt-resp-up' }) },
      { name: MODEL.mock, display_name: 'mock', routes: every({ provider: 'drip', model: 'sim-drip' }) },
      { name: SLOW_MOCK, display_name: 'slow mock', routes: every({ provider: 'slow', model: 'sim-slow' }) },
      // An operator's upstream model name that is not Latin-1, as `x-route` names it.
      { name: UNICODE_MODEL, display_name: 'unicode', routes: every({ provider: 'gpt', model: 'qwen-通义' }) },
    ],
  };
  const t = await startTestApp({ catalog, env: { BILLING_UPSTREAM_KEY: 'sk-upstream-billing', ...env } });
  const owner = await createAccount(t);
  return {
    t,
    owner,
    fakes,
    key: async () => {
      const created = await createKey(t, owner.token, { model_scope: [...Object.values(MODEL), SLOW_MOCK, UNICODE_MODEL] });
      return { secret: created.api_key, id: created.api_key_id };
    },
    close: async () => {
      await t.close();
      await Promise.all(Object.values(fakes).map((fake) => fake.close()));
    },
  };
}

/** A request body in the form's shape: a system prompt and one user turn. */
export function formBody(form: Form, model: string, prompt: string, stream: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  switch (form) {
    case 'messages':
      return { model, max_tokens: 256, stream, system: SYSTEM, messages: [{ role: 'user', content: prompt }], ...extra };
    case 'chat':
      return { model, max_tokens: 256, stream, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: prompt }], ...extra };
    case 'responses':
      return { model, max_output_tokens: 256, stream, store: false, instructions: SYSTEM, input: prompt, ...extra };
  }
}

export function post(g: BillingGateway, form: Form, secret: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${g.t.baseUrl}${PATH[form]}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

export interface RecordRow {
  request_id: string;
  status: string;
  error_code: string | null;
  estimated: boolean;
  routed_model: string | null;
  raw_input_cache_hit: number;
  raw_input_cache_miss: number;
  raw_output: number;
  tokens_input_cache_hit: string;
  tokens_input_cache_miss: string;
  tokens_output: string;
  amount_micros: string;
}

/** The usage records of a key, once `count` of them are committed. */
export async function recordsOfKey(keyId: string, count: number): Promise<RecordRow[]> {
  const db = await testDatabase();
  for (let attempt = 0; attempt < 200; attempt++) {
    const rows = await db.pool.query<RecordRow>('select * from usage_records where api_key_id = $1', [keyId]);
    expect(rows.rows.length, `usage records of ${keyId}`).to.be.at.most(count);
    if (rows.rows.length === count) return rows.rows;
    await delay(25);
  }
  throw new Error(`fewer than ${count} usage records for key ${keyId}`);
}

/** The one usage record of a key, once it is committed. */
export async function recordOfKey(keyId: string): Promise<RecordRow> {
  return (await recordsOfKey(keyId, 1))[0]!;
}

/** Polls until `check` holds (the fakes record a request once its body has arrived). */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await delay(10);
  expect(check(), what).to.equal(true);
}

/** Reads a streamed reply until `seen` holds for what arrived, then hangs up; returns the text read. */
export async function readThenHangUp(response: Response, controller: AbortController, seen: (text: string) => boolean): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before the client hung up: ${text.slice(-500)}`);
    text += decoder.decode(value, { stream: true });
    if (seen(text)) break;
  }
  controller.abort();
  await reader.cancel().catch(() => undefined);
  return text;
}

/** Words that make a prompt of a known size; `seed` keeps each test's prompt its own. */
export function prose(seed: string, words: number): string {
  const vocabulary = ['ledger', 'invoice', 'settles', 'every', 'token', 'the', 'gateway', 'meters', 'exactly', 'in', 'micro-units', '计费', '准确', 'and', 'reports'];
  const out = [seed];
  for (let i = 0; out.length <= words; i++) out.push(vocabulary[(i * 7 + (i >> 2)) % vocabulary.length]!);
  return out.join(' ');
}
