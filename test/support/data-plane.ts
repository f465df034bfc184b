// Data-plane calls over real HTTP in both protocol forms, plain and streamed,
// and the usage record each call left behind (read from PostgreSQL).
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { BUILTIN_PRICES } from '../../src/routing/builtin-catalog';
import type { TestApp } from './app';
import { testDatabase } from './db';
import { parseAnswer, type SseEvent } from './sse-client';

export type Form = 'messages' | 'chat';

export const PATHS: Record<Form, string> = { messages: '/v1/messages', chat: '/v1/chat/completions' };

/** Catalog-file JSON with the currency and prices of `catalog.example.json` around the given providers, models and extras. */
export function catalogFile(parts: { providers: Record<string, unknown>; models: unknown[]; [field: string]: unknown }): Record<string, unknown> {
  return { currency: 'CNY', prices: { ...BUILTIN_PRICES }, ...parts };
}

export interface DataPlaneResponse {
  status: number;
  headers: Headers;
  requestId: string;
  /** Plain calls: the JSON body. Streamed calls: null. */
  body: any;
  /** Streamed calls: every SSE event in order. */
  events: SseEvent[];
  /** Everything the client received, for "never crosses the gateway" checks. */
  raw: string;
}

/** A request body in the form's shape: one user message, or the given messages / extra fields. */
export function requestBody(form: Form, model: string, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return form === 'messages'
    ? { model, max_tokens: 2048, messages: [{ role: 'user', content: text }], ...extra }
    : { model, messages: [{ role: 'user', content: text }], ...extra };
}

export async function call(t: TestApp, form: Form, apiKey: string, body: Record<string, unknown>): Promise<DataPlaneResponse> {
  const response = await fetch(`${t.baseUrl}${PATHS[form]}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const raw = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    requestId: response.headers.get('request-id') ?? response.headers.get('x-request-id') ?? '',
    ...parseAnswer(response.headers, raw),
    raw,
  };
}

/** The answer's text: the JSON body's, or the streamed deltas joined. */
export function answerText(form: Form, response: DataPlaneResponse): string {
  if (response.events.length === 0) {
    if (form === 'messages') return (response.body.content as any[]).map((block) => (block.type === 'text' ? block.text : '')).join('');
    return response.body.choices[0].message.content ?? '';
  }
  return response.events
    .map(({ data }) => {
      if (form === 'messages') return data?.type === 'content_block_delta' && data.delta.type === 'text_delta' ? data.delta.text : '';
      return data?.choices?.[0]?.delta?.content ?? '';
    })
    .join('');
}

/** How the answer ended: `stop_reason` (messages) or `finish_reason` (chat), plain or streamed. */
export function stopReason(form: Form, response: DataPlaneResponse): string | null {
  if (response.events.length === 0) return form === 'messages' ? response.body.stop_reason : response.body.choices[0].finish_reason;
  for (const { data } of [...response.events].reverse()) {
    if (form === 'messages' && data?.type === 'message_delta') return data.delta.stop_reason;
    if (form === 'chat' && data?.choices?.[0]?.finish_reason) return data.choices[0].finish_reason;
  }
  return null;
}

/** The usage the client was told: the JSON body's, or the last one streamed. */
export function answerUsage(response: DataPlaneResponse): Record<string, any> | undefined {
  if (response.events.length === 0) return response.body?.usage;
  let usage: Record<string, any> | undefined;
  for (const { data } of response.events) {
    const found = data?.usage ?? data?.message?.usage;
    if (found) usage = found;
  }
  return usage;
}

export interface UsageRow {
  request_id: string;
  status: string;
  error_code: string | null;
  model: string;
  routed_model: string | null;
  provider: string | null;
  route_tier: string | null;
  route_score: number | null;
  route_reasons: string[];
  thinking: boolean;
  stream: boolean;
  price_tier: string;
  guardrail_hits: Record<string, number>;
  [column: string]: unknown;
}

/** The call's usage record; it is committed before the reply completes, so it is there at once. */
export async function usageRecord(requestId: string): Promise<UsageRow> {
  expect(requestId, 'the response carried a request id').to.match(/^req_/);
  const db = await testDatabase();
  // A streamed error path commits just before the stream ends; allow a moment.
  for (let attempt = 0; attempt < 40; attempt++) {
    const result = await db.pool.query<UsageRow>('select * from usage_records where request_id = $1', [requestId]);
    if (result.rows.length > 1) throw new Error(`${result.rows.length} usage records for ${requestId}`);
    if (result.rows[0]) return result.rows[0];
    await delay(25);
  }
  throw new Error(`no usage record for ${requestId}`);
}
