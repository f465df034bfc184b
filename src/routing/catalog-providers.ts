// The `providers` section of the model catalog (docs/architecture.md §16.6): each upstream's
// type, address, key variable, clocks, breaker and mock behaviour, checked
// with the same readers as the rest of the file (catalog.ts runs the whole).
import { ALLOWANCE_KINDS, MAX_INPUT_ALLOWANCE, type InputAllowances } from '../core/input-allowances';
import { at, type Env, type Json, type Reader } from './catalog-reader';
import type { BreakerOptions, MockBehaviour, ProviderConfig, ProviderType } from '../core/catalog.types';

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Fast enough for tests and demos, slow enough that streaming is visible. */
const DEFAULT_MOCK: Readonly<MockBehaviour> = {
  latencyMs: 20,
  chunkDelayMs: 5,
  chunkChars: 16,
  failRate: 0,
  failStatus: 503,
  resetAfterChunks: null,
};

const PROVIDER_TYPES: readonly ProviderType[] = ['anthropic', 'openai', 'mock'];
const PROVIDER_NAME = /^[a-zA-Z0-9._-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function parseMock(r: Reader, value: unknown, path: string): MockBehaviour {
  const json = r.object(value, path, ['latency_ms', 'chunk_delay_ms', 'chunk_chars', 'fail_rate', 'fail_status', 'reset_after_chunks']);
  if (json === undefined) return { ...DEFAULT_MOCK };
  let failRate = DEFAULT_MOCK.failRate;
  if (json.fail_rate !== undefined) {
    if (typeof json.fail_rate === 'number' && json.fail_rate >= 0 && json.fail_rate <= 1) failRate = json.fail_rate;
    else r.fail(at(path, 'fail_rate'), `must be a number from 0 to 1, got ${JSON.stringify(json.fail_rate)}`);
  }
  return {
    latencyMs: r.integer(json, 'latency_ms', path, 0, 600_000) ?? DEFAULT_MOCK.latencyMs,
    chunkDelayMs: r.integer(json, 'chunk_delay_ms', path, 0, 60_000) ?? DEFAULT_MOCK.chunkDelayMs,
    chunkChars: r.integer(json, 'chunk_chars', path, 1, 1_000_000) ?? DEFAULT_MOCK.chunkChars,
    failRate,
    failStatus: r.integer(json, 'fail_status', path, 400, 599) ?? DEFAULT_MOCK.failStatus,
    resetAfterChunks: json.reset_after_chunks === null ? null : (r.integer(json, 'reset_after_chunks', path, 0, 1_000_000) ?? null),
  };
}

/** `breaker: {threshold, cooldown_ms}`, each optional over `base`; also the catalog-wide `breaker`. */
export function parseBreaker(r: Reader, value: unknown, path: string, base: Readonly<BreakerOptions>): BreakerOptions {
  const json = r.object(value, path, ['threshold', 'cooldown_ms']);
  if (json === undefined) return { ...base };
  return {
    threshold: r.integer(json, 'threshold', path, 1, 1000) ?? base.threshold,
    cooldownMs: r.integer(json, 'cooldown_ms', path, 1, 86_400_000) ?? base.cooldownMs,
  };
}

/**
 * `input_allowances: {"web_search": 20000, …}` on a provider or a deployment:
 * tokens the worst case allows for each kind of input the upstream adds
 * beyond the body (src/core/input-allowances.ts), over the defaults.
 */
export function parseInputAllowances(r: Reader, value: unknown, path: string): Partial<InputAllowances> | undefined {
  if (value === undefined) return undefined;
  const json = r.object(value, path, ALLOWANCE_KINDS);
  if (json === undefined) return undefined;
  const allowances: Partial<Record<keyof InputAllowances, number>> = {};
  for (const kind of ALLOWANCE_KINDS) {
    const tokens = r.integer(json, kind, path, 0, MAX_INPUT_ALLOWANCE);
    if (tokens !== undefined) allowances[kind] = tokens;
  }
  return allowances;
}

function parseBaseUrl(r: Reader, json: Json, path: string, type: ProviderType): string | undefined {
  const raw = r.string(json, 'base_url', path);
  if (raw === undefined) {
    if (type !== 'mock' && json.base_url === undefined) r.fail(at(path, 'base_url'), `is required for type "${type}"`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return r.fail(at(path, 'base_url'), `must be an http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return r.fail(at(path, 'base_url'), `must be an http(s) URL, got ${JSON.stringify(raw)}`);
  // Adapters append their path (`/v1/messages`, `/chat/completions`) to this.
  const base = raw.replace(/\/+$/, '');
  if (type === 'anthropic' && /\/v1$/.test(base)) {
    return r.fail(
      at(path, 'base_url'),
      `must not end in /v1 for type "anthropic" (the adapter calls {base_url}/v1/messages, as the official client does); use ${JSON.stringify(base.slice(0, -3))}`,
    );
  }
  return base;
}

function parseProvider(
  r: Reader,
  name: string,
  value: unknown,
  env: Env,
  warnings: string[],
  breaker: Readonly<BreakerOptions>,
): ProviderConfig | undefined {
  const path = at('providers', name);
  const json = r.object(value, path, [
    'type',
    'base_url',
    'api_key_env',
    'timeout_ms',
    'connect_timeout_ms',
    'idle_timeout_ms',
    'mock',
    'breaker',
    'responses',
    'input_allowances',
  ]);
  if (json === undefined) return undefined;
  if (!PROVIDER_NAME.test(name)) r.fail(path, 'provider names may only contain letters, digits, ".", "_" and "-"');
  const typeText = r.required(r.string(json, 'type', path), json, 'type', path);
  if (typeText !== undefined && !PROVIDER_TYPES.includes(typeText as ProviderType)) {
    r.fail(at(path, 'type'), `must be one of ${PROVIDER_TYPES.join(', ')}, got ${JSON.stringify(typeText)}`);
  }
  const type = PROVIDER_TYPES.includes(typeText as ProviderType) ? (typeText as ProviderType) : undefined;
  const baseUrl = type === undefined ? undefined : parseBaseUrl(r, json, path, type);
  const apiKeyEnv = r.string(json, 'api_key_env', path, ENV_NAME, 'must be an environment variable name');
  // A missing key is not fatal: the operator may add it later, and that
  // provider's calls then fail upstream (401) and fall back to the next route.
  const apiKey = apiKeyEnv === undefined ? undefined : env[apiKeyEnv] || undefined;
  if (apiKeyEnv !== undefined && apiKey === undefined && type !== 'mock') {
    warnings.push(`${path}: environment variable ${apiKeyEnv} is not set; calls to this provider will be refused upstream`);
  }
  if (json.timeout_ms !== undefined && json.connect_timeout_ms !== undefined) {
    r.fail(at(path, 'timeout_ms'), 'give either timeout_ms or connect_timeout_ms, not both');
  }
  const connectTimeoutMs = r.integer(json, 'connect_timeout_ms', path, 1, 3_600_000) ?? r.integer(json, 'timeout_ms', path, 1, 3_600_000);
  if (json.mock !== undefined && type !== undefined && type !== 'mock') r.fail(at(path, 'mock'), 'is only valid for providers of type "mock"');
  const mock = json.mock === undefined ? { ...DEFAULT_MOCK } : parseMock(r, json.mock, at(path, 'mock'));
  const idleTimeoutMs = r.integer(json, 'idle_timeout_ms', path, 1, 3_600_000);
  if (json.responses !== undefined && typeof json.responses !== 'boolean') r.fail(at(path, 'responses'), 'must be true or false');
  else if (json.responses === true && type !== undefined && type !== 'openai') r.fail(at(path, 'responses'), 'is only valid for providers of type "openai"');
  const ownBreaker = json.breaker === undefined ? undefined : parseBreaker(r, json.breaker, at(path, 'breaker'), breaker);
  const inputAllowances = parseInputAllowances(r, json.input_allowances, at(path, 'input_allowances'));
  if (type === undefined) return undefined;
  return {
    name,
    type,
    baseUrl,
    apiKeyEnv,
    apiKey,
    connectTimeoutMs: connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    idleTimeoutMs: idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    mock,
    ...(ownBreaker === undefined ? {} : { breaker: ownBreaker }),
    ...(inputAllowances === undefined ? {} : { inputAllowances }),
    ...(json.responses === true && type === 'openai' ? { responses: true } : {}),
  };
}

export interface ProviderTable {
  /** Every name the file declares, valid or not, so a bad provider is reported once, not at each use. */
  names: string[];
  byName: Map<string, ProviderConfig>;
}

/** The `providers` section; a warning is added for each `api_key_env` that is not set. */
export function parseProviders(r: Reader, value: unknown, env: Env, warnings: string[], breaker: Readonly<BreakerOptions>): ProviderTable {
  const table: ProviderTable = { names: [], byName: new Map() };
  if (value === undefined) {
    r.fail('providers', 'is required');
    return table;
  }
  const json = r.object(value, 'providers');
  if (json === undefined) return table;
  for (const [name, entry] of Object.entries(json)) {
    if (name.startsWith('x-') || name.startsWith('_comment')) continue;
    table.names.push(name);
    const provider = parseProvider(r, name, entry, env, warnings, breaker);
    if (provider !== undefined) table.byName.set(name, provider);
  }
  return table;
}
