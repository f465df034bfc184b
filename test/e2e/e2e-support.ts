// Shared pieces of the end-to-end tests: a catalog whose providers point at
// the fake upstreams (and the built-in mock), the gateway in front of them,
// usage queries over REST, a small poller and the checks every official
// client's API error passes.
// Not a test file itself (mocha only runs *.test.ts).
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import type { PriceClass } from '../../src/metering/tiers';
import type { KeyUsage, UsageList } from '../../src/metering/usage-query.service';
import { BUILTIN_PRICES } from '../../src/routing/builtin-catalog';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../support/app';
import { startFakeAnthropic, startFakeOpenAI, startFakeOpenAIResponses, type FakeUpstream } from '../support/fake-upstreams';

/** Names of the environment variables holding the provider keys, and their values. */
export const PROVIDER_ENV = {
  E2E_ANTHROPIC_KEY: 'sk-ant-e2e-provider-key',
  E2E_OPENAI_KEY: 'sk-openai-e2e-provider-key',
};

/** Unify factors of the OpenAI-upstream deployment, so the e2e path also exercises rounding. */
export const OPENAI_UNIFY = { input: 1.5, output: 2 };

const allTiers = (deployment: Record<string, unknown>, thinking: Record<string, unknown> = deployment) => ({
  light: [deployment],
  standard: [deployment],
  heavy: [deployment],
  thinking: [thinking],
});

/**
 * A catalog in the file format of docs/architecture.md §16.6: `m-anthropic` (every tier → the fake Anthropic),
 * `m-openai` (every tier → the fake OpenAI server), `m-mock` and `m-extra`
 * (the built-in mock provider, latency 0; the thinking tier asks it to think),
 * and with a Responses-speaking fake `m-responses` (every tier → it, through
 * an `openai` provider with `responses: true`).
 */
export function e2eCatalog(upstreams: { anthropic?: FakeUpstream; openai?: FakeUpstream; responses?: FakeUpstream } = {}): unknown {
  const catalog = {
    currency: 'CNY',
    prices: BUILTIN_PRICES,
    providers: {
      'fake-claude': {
        type: 'anthropic',
        base_url: upstreams.anthropic?.baseUrl ?? 'http://127.0.0.1:9',
        api_key_env: 'E2E_ANTHROPIC_KEY',
        connect_timeout_ms: 5_000,
        idle_timeout_ms: 5_000,
      },
      'fake-gpt': {
        type: 'openai',
        base_url: upstreams.openai?.baseUrl ?? 'http://127.0.0.1:9/v1',
        api_key_env: 'E2E_OPENAI_KEY',
        connect_timeout_ms: 5_000,
        idle_timeout_ms: 5_000,
      },
      sim: { type: 'mock', mock: { latency_ms: 0, chunk_delay_ms: 0 } },
    },
    models: [
      {
        name: 'm-anthropic',
        display_name: 'Anthropic via fake',
        // What Claude Code and Anthropic clients send when no --model is given.
        aliases: ['claude-*', 'anthropic-default'],
        routes: allTiers({ provider: 'fake-claude', model: 'claude-fake' }),
      },
      {
        name: 'm-openai',
        display_name: 'OpenAI via fake',
        aliases: ['gpt-*'],
        default_max_tokens: 777,
        routes: allTiers({ provider: 'fake-gpt', model: 'gpt-fake', unify: OPENAI_UNIFY }),
      },
      {
        name: 'm-mock',
        display_name: 'Built-in mock',
        routes: allTiers({ provider: 'sim', model: 'sim-e2e' }, { provider: 'sim', model: 'sim-e2e-think', thinking: true }),
      },
      {
        name: 'm-extra',
        display_name: 'Another mock',
        aliases: ['extra-*'],
        routes: allTiers({ provider: 'sim', model: 'sim-extra' }),
      },
    ],
  };
  if (!upstreams.responses) return catalog;
  return {
    ...catalog,
    providers: {
      ...catalog.providers,
      'fake-gpt-responses': {
        type: 'openai',
        base_url: upstreams.responses.baseUrl,
        api_key_env: 'E2E_OPENAI_KEY',
        responses: true,
        connect_timeout_ms: 5_000,
        idle_timeout_ms: 5_000,
      },
    },
    models: [
      ...catalog.models,
      {
        name: 'm-responses',
        display_name: 'OpenAI Responses via fake',
        // The built-in catalog's general model name, as the Vercel AI SDK's docs-style call names it.
        aliases: ['tsxt-general'],
        routes: allTiers({ provider: 'fake-gpt-responses', model: 'gpt-fake-responses' }),
      },
    ],
  };
}

/** The protocols of the two fake upstreams. */
export type UpstreamKind = 'anthropic' | 'openai';

/** The catalog model that routes to each fake upstream, and the upstream model it answers as. */
export const MODEL_VIA: Record<UpstreamKind, string> = { anthropic: 'm-anthropic', openai: 'm-openai' };
export const ROUTED_MODEL: Record<UpstreamKind, string> = { anthropic: 'claude-fake', openai: 'gpt-fake' };

/** The model scope of the tests' keys (`m-extra` stays out of it). */
export const KEY_SCOPE = ['m-anthropic', 'm-openai', 'm-mock'];

export interface E2eGateway {
  t: TestApp;
  /** With `responses: true` also `responses`, the Responses-speaking fake behind `m-responses`. */
  fakes: Record<UpstreamKind, FakeUpstream> & { responses?: FakeUpstream };
  close(): Promise<void>;
}

export interface E2eGatewayOptions {
  /** Also a fake OpenAI server that speaks the Responses API, behind model `m-responses`. */
  responses?: boolean;
}

/** Both fake upstreams (and the Responses one, when asked), and the gateway in front of them on `e2eCatalog` with the provider keys set. */
export async function startE2eGateway(options: E2eGatewayOptions = {}): Promise<E2eGateway> {
  const fakes = {
    anthropic: await startFakeAnthropic(),
    openai: await startFakeOpenAI(),
    ...(options.responses ? { responses: await startFakeOpenAIResponses() } : {}),
  };
  const t = await startTestApp({ catalog: e2eCatalog(fakes), env: PROVIDER_ENV });
  return {
    t,
    fakes,
    close: async () => {
      await t.close();
      await Promise.all(Object.values(fakes).map((fake) => fake.close()));
    },
  };
}

/** The e2e gateway with an owner account and one key in KEY_SCOPE, the state most e2e suites start from. */
export interface KeyedGateway extends E2eGateway {
  owner: TestAccount;
  secret: string;
  keyId: string;
  /** A JSON POST to the gateway with the key as bearer token. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

/** The e2e gateway with an owner and one key in KEY_SCOPE (and `m-responses`, with `responses: true`). */
export async function startKeyedGateway(options: E2eGatewayOptions = {}): Promise<KeyedGateway> {
  const gateway = await startE2eGateway(options);
  const owner = await createAccount(gateway.t);
  const key = await createKey(gateway.t, owner.token, { model_scope: options.responses ? [...KEY_SCOPE, 'm-responses'] : KEY_SCOPE });
  const secret: string = key.api_key;
  return {
    ...gateway,
    owner,
    secret,
    keyId: key.api_key_id,
    post: (path, body, headers = {}) =>
      fetch(`${gateway.t.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
  };
}

/** A date range around today that covers the account zone's today whatever the zone. */
export function usageRange(): { start: string; end: string } {
  const day = 86_400_000;
  const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
  return { start: iso(Date.now() - 2 * day), end: iso(Date.now() + 2 * day) };
}

/** Every usage record of one key (newest first). */
export async function usageDetail(t: TestApp, token: string, apiKeyId: string): Promise<UsageList> {
  const { start, end } = usageRange();
  const response = await api<UsageList>(t, 'GET', `/api/v1/usage?start=${start}&end=${end}&api_key_id=${apiKeyId}&page_size=500`, token);
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  return response.body;
}

export async function keyUsage(t: TestApp, token: string, apiKeyId: string): Promise<KeyUsage> {
  const { start, end } = usageRange();
  const response = await api<KeyUsage>(t, 'GET', `/api/v1/keys/${apiKeyId}/usage?start=${start}&end=${end}`, token);
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  return response.body;
}

/** Decimal string → integer micro-units (amounts have at most 6 decimals). */
export function micros(amount: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(amount);
  if (!match) throw new Error(`not a money amount: ${amount}`);
  const value = BigInt(match[2]!) * 1_000_000n + BigInt((match[3] ?? '').padEnd(6, '0'));
  return match[1] ? -value : value;
}

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 5_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await delay(everyMs);
  }
}

/** Usage fields the gateway adds to both forms (docs/architecture.md §7). */
export interface GatewayUsage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  price_tier: PriceClass;
  thinking: boolean;
}

/** The gateway's extra usage fields, read off an SDK usage object typed without them. */
export function gatewayUsage(usage: unknown): GatewayUsage {
  const u = usage as Record<string, unknown>;
  return {
    input_tokens: u.input_tokens as number,
    output_tokens: u.output_tokens as number,
    cached_input_tokens: u.cached_input_tokens as number,
    price_tier: u.price_tier as PriceClass,
    thinking: u.thinking as boolean,
  };
}

/** The part of an official client's `APIError` (Anthropic and OpenAI alike) the gateway controls. */
interface ClientApiError {
  readonly status: number | undefined;
  readonly headers: Headers | undefined;
  readonly requestID: string | null | undefined;
}

/**
 * Runs `call` and expects it to throw `type` with `status`, a `req_` request id
 * in the `requestIdHeader` response header, and that id as the client's
 * `requestID`. Returns the error and the id for the envelope's own checks.
 */
export async function expectApiError<E extends ClientApiError>(
  call: () => Promise<unknown>,
  type: abstract new (...args: never[]) => E,
  status: number,
  requestIdHeader: string,
): Promise<{ error: E; requestId: string | null | undefined }> {
  let caught: unknown;
  try {
    await call();
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${type.name}`).to.be.instanceOf(type);
  const error = caught as E;
  expect(error.status).to.equal(status);
  const requestId = error.headers?.get(requestIdHeader);
  expect(requestId).to.match(/^req_/);
  expect(error.requestID).to.equal(requestId);
  return { error, requestId };
}

/** One request an official client sent to the gateway, as `recordingFetch` saw it. */
export interface SentRequest {
  method: string;
  /** Path and query, e.g. `/v1/responses`. */
  path: string;
  /** The parsed JSON body (undefined without one). */
  body: any;
}

/**
 * A `fetch` for a client's options that keeps what the client sends before
 * passing it on: the tests tell what the client asked of the gateway (an
 * `item_reference`, a `previous_response_id`) apart from what the upstream got.
 */
export function recordingFetch(): { fetch: typeof fetch; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const recording: typeof fetch = (input, init) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const raw = typeof init?.body === 'string' ? init.body : undefined;
    sent.push({ method: init?.method ?? 'GET', path: `${url.pathname}${url.search}`, body: raw === undefined ? undefined : parseJson(raw) });
    return fetch(input, init);
  };
  return { fetch: recording, sent };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The wire protocols the fake upstreams speak. */
export type UpstreamProtocol = 'anthropic' | 'openai' | 'responses';

/**
 * The conversation an upstream request carries, one line per turn part in
 * order, the same whatever the protocol: `user:<text>`, `assistant:<text>`,
 * `call:<call id>:<tool name>`, `result:<call id>:<output>`, and
 * `ref:<id>` for an `item_reference` left in a Responses input. System and
 * developer text and reasoning are left out. The stateful tests compare it
 * with the conversation the client had, so a turn the gateway dropped,
 * reordered or left as a reference shows as a difference.
 */
export function transcript(protocol: UpstreamProtocol, body: any): string[] {
  const lines: string[] = [];
  const text = (content: unknown): string =>
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('')
        : '';
  const said = (role: string, content: unknown): void => {
    const words = text(content);
    if (words !== '' && (role === 'user' || role === 'assistant')) lines.push(`${role}:${words}`);
  };
  switch (protocol) {
    case 'responses': {
      const input: any[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
      for (const item of input) {
        if (item.type === 'function_call') lines.push(`call:${item.call_id}:${item.name}`);
        else if (item.type === 'function_call_output') lines.push(`result:${item.call_id}:${text(item.output)}`);
        else if (item.type === 'item_reference') lines.push(`ref:${item.id}`);
        else if (item.role !== undefined) said(item.role, item.content);
      }
      break;
    }
    case 'openai':
      for (const message of body.messages ?? []) {
        if (message.role === 'tool') {
          lines.push(`result:${message.tool_call_id}:${text(message.content)}`);
          continue;
        }
        said(message.role, message.content);
        for (const call of message.tool_calls ?? []) lines.push(`call:${call.id}:${call.function.name}`);
      }
      break;
    case 'anthropic':
      for (const message of body.messages ?? []) {
        if (typeof message.content === 'string') {
          said(message.role, message.content);
          continue;
        }
        for (const block of message.content) {
          if (block.type === 'text') said(message.role, block.text);
          else if (block.type === 'tool_use') lines.push(`call:${block.id}:${block.name}`);
          else if (block.type === 'tool_result') lines.push(`result:${block.tool_use_id}:${text(block.content)}`);
        }
      }
      break;
  }
  return lines;
}
