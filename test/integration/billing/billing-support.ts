// Helpers for the billing tests (not a spec file): data-plane calls with plain
// fetch that return what the client saw, exact decimal → micro-unit parsing,
// and paging through the usage detail.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type pg from 'pg';
import type { Actor } from '../../../src/domain/actor';
import { priceCall, priceClassOf } from '../../../src/metering/tiers';
import type { UsageRecordInput } from '../../../src/metering/usage-recorder';
import { PRICE_TIERS, type PriceTier } from '../../../src/core/catalog.types';
import { api, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';

export { PRICE_TIERS, type PriceTier };

/** "12.345678" → 12345678n; exact, never through a float. */
export function micros(amount: string): bigint {
  const match = /^(-)?(\d+)(?:\.(\d{1,6}))?$/.exec(amount);
  if (!match) throw new Error(`not a decimal amount with at most 6 places: ${JSON.stringify(amount)}`);
  const value = BigInt(match[2]!) * 1_000_000n + BigInt((match[3] ?? '').padEnd(6, '0'));
  return match[1] ? -value : value;
}

/** price (per million tokens, decimal string) × tokens, rounded half up to micro-units: what one call's tier costs. */
export function tierMicros(tokens: number, unitPrice: string): bigint {
  const [whole, fraction = ''] = unitPrice.split('.');
  const scale = 10n ** BigInt(fraction.length);
  const exact = BigInt(tokens) * BigInt(`${whole}${fraction}`);
  return (2n * exact + scale) / (2n * scale);
}

export async function pool(): Promise<pg.Pool> {
  return (await testDatabase()).pool;
}

/** Every column of usage_records, for tests that seed rows with SQL (`estimated` keeps its default, false). */
export const USAGE_RECORD_COLUMNS = `id, request_id, account_id, api_key_id, form, model, routed_model, provider, route_tier, route_score,
  route_reasons, thinking, stream, status, error_code, price_tier, raw_input_cache_hit, raw_input_cache_miss, raw_output,
  tokens_input_cache_hit, tokens_input_cache_miss, tokens_output, amount_input_cache_hit, amount_input_cache_miss, amount_output,
  total_tokens, amount_micros, guardrail_hits, latency_ms, ttft_ms, created_at`;

export const operator = (accountId: string): Actor => ({ accountId, userId: null, label: 'billing-test', role: 'owner', ip: null });

/** The usage a client saw in one response (both forms reduced to the same fields). */
export interface SeenUsage {
  input: number;
  output: number;
  cached: number;
  thinking: boolean;
}

export interface CallResult {
  status: number;
  requestId: string | null;
  headers: Headers;
  usage: SeenUsage | null;
  body: any;
}

export interface CallSpec {
  form: 'messages' | 'chat';
  stream: boolean;
  thinking: boolean;
  /** Alternating user/assistant turns, ending with a user turn. */
  turns: string[];
  model?: string;
  maxTokens?: number;
}

function sseEvents(text: string): any[] {
  const events: any[] = [];
  for (const block of text.split(/\n\n/)) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .join('\n');
    if (data === '' || data === '[DONE]') continue;
    events.push(JSON.parse(data));
  }
  return events;
}

/** One data-plane call with plain fetch; returns the usage the client saw. */
export async function dataCall(t: TestApp, secret: string, spec: CallSpec): Promise<CallResult> {
  const messages = spec.turns.map((text, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: text }));
  const model = spec.model ?? 'tsxt-general';
  let path: string;
  let body: Record<string, unknown>;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (spec.form === 'messages') {
    path = '/v1/messages';
    headers['x-api-key'] = secret;
    headers['anthropic-version'] = '2023-06-01';
    body = {
      model,
      max_tokens: spec.maxTokens ?? (spec.thinking ? 2048 : 256),
      messages,
      ...(spec.thinking ? { thinking: { type: 'enabled', budget_tokens: 1024 } } : {}),
      ...(spec.stream ? { stream: true } : {}),
    };
  } else {
    path = '/v1/chat/completions';
    headers.authorization = `Bearer ${secret}`;
    body = {
      model,
      max_tokens: spec.maxTokens ?? (spec.thinking ? 2048 : 256),
      messages,
      ...(spec.thinking ? { reasoning_effort: 'low' } : {}),
      ...(spec.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    };
  }
  const response = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  const requestId = response.headers.get('request-id');
  const base = { status: response.status, requestId, headers: response.headers };
  if (response.status !== 200) return { ...base, usage: null, body: text ? JSON.parse(text) : null };
  if (!spec.stream) {
    const json = JSON.parse(text);
    const u = json.usage;
    const usage =
      spec.form === 'messages'
        ? { input: u.input_tokens, output: u.output_tokens, cached: u.cached_input_tokens, thinking: u.thinking }
        : { input: u.prompt_tokens, output: u.completion_tokens, cached: u.prompt_tokens_details.cached_tokens, thinking: u.thinking };
    return { ...base, usage, body: json };
  }
  const events = sseEvents(text);
  let usage: SeenUsage | null = null;
  if (spec.form === 'messages') {
    // message_delta carries the final cumulative usage.
    const delta = events.findLast((e) => e.type === 'message_delta');
    if (delta) {
      const u = delta.usage;
      usage = { input: u.input_tokens, output: u.output_tokens, cached: u.cached_input_tokens, thinking: u.thinking };
    }
  } else {
    const last = events.findLast((e) => e.usage);
    if (last) {
      const u = last.usage;
      usage = { input: u.prompt_tokens, output: u.completion_tokens, cached: u.prompt_tokens_details.cached_tokens, thinking: u.thinking };
    }
  }
  return { ...base, usage, body: events };
}

/** Every usage-detail item of the range (optionally one key), all pages. */
export async function allUsageItems(t: TestApp, token: string, start: string, end: string, apiKeyId?: string): Promise<{ items: any[]; first: any }> {
  const items: any[] = [];
  let first: any;
  for (let page = 1; ; page++) {
    const query = new URLSearchParams({ start, end, page: String(page), page_size: '500', ...(apiKeyId ? { api_key_id: apiKeyId } : {}) });
    const response = await api(t, 'GET', `/api/v1/usage?${query}`, token);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    first ??= response.body;
    items.push(...response.body.items);
    if (items.length >= response.body.total || response.body.items.length === 0) break;
  }
  return { items, first };
}

/** `YYYY-MM-DD` of `at` in `zone`. */
export function zoneDay(zone: string, at = new Date()): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

export function shiftDay(day: string, days: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** Polls until `check` passes or the deadline expires (then rethrows its last failure). Returns the elapsed ms. */
export async function eventually(check: () => Promise<unknown>, timeoutMs = 3000, stepMs = 10): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      await check();
      return Date.now() - started;
    } catch (error) {
      if (Date.now() - started > timeoutMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, stepMs));
    }
  }
}

/** A usage record as the pipeline would write it, for seeding through the real recorder. */
export function usageInput(
  t: TestApp,
  options: {
    accountId: string;
    timezone: string;
    apiKeyId: string;
    at?: Date;
    thinking?: boolean;
    hit?: number;
    miss?: number;
    output?: number;
  },
): UsageRecordInput {
  const thinking = options.thinking ?? false;
  const raw = { inputCacheHit: options.hit ?? 0, inputCacheMiss: options.miss ?? 0, output: options.output ?? 0 };
  const tokens = { priceTier: priceClassOf(thinking), ...raw };
  return {
    requestId: `req_${randomBytes(12).toString('hex')}`,
    accountId: options.accountId,
    accountTimezone: options.timezone,
    apiKeyId: options.apiKeyId,
    form: 'messages',
    model: 'tsxt-general',
    requestedModel: 'tsxt-general',
    routedModel: 'sim-medium',
    provider: 'sim',
    routeTier: 'standard',
    routeScore: 0.5,
    routeReasons: [],
    thinking,
    stream: false,
    status: 'ok',
    errorCode: null,
    raw,
    tokens,
    estimated: false,
    amounts: priceCall(tokens, t.app.services.catalog.prices),
    guardrailHits: {},
    latencyMs: 1,
    ttftMs: 1,
    ...(options.at ? { at: options.at } : {}),
  };
}
