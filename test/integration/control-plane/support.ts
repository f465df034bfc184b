// Small helpers shared by the REST control-plane tests (not a spec file).
import { api, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';

/** `YYYY-MM-DD` of `at` in an IANA zone, computed independently of src/. */
export function zoneToday(zone: string, at: Date = new Date()): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** The calendar date `days` after (or before, when negative) `date`. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** Moves a key's last valid day with SQL (e.g. into the past, which the API refuses). */
export async function setExpiresAt(keyId: string, date: string | null): Promise<void> {
  const { pool } = await testDatabase();
  const result = await pool.query('update api_keys set expires_at = $2 where id = $1', [keyId, date]);
  if (result.rowCount !== 1) throw new Error(`setExpiresAt: no key ${keyId}`);
}

export interface AuditEventBody {
  id: string;
  actor: string;
  actor_user_id: string | null;
  action: string;
  api_key_id: string | null;
  changes: Record<string, { from: unknown; to: unknown }>;
  ip: string | null;
  created_at: string;
}

/** The audit events of one key, newest first. */
export async function auditEventsOf(t: TestApp, token: string, keyId: string): Promise<AuditEventBody[]> {
  const response = await api<{ total: number; items: AuditEventBody[] }>(t, 'GET', `/api/v1/audit-events?api_key_id=${keyId}&page_size=200`, token);
  if (response.status !== 200) throw new Error(`audit-events: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.items;
}

/** A request whose answer is kept as the raw text the client received. */
export async function rawRequest(
  t: TestApp,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${t.baseUrl}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, text: await response.text() };
}
