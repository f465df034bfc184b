// Each gateway process runs one dispatcher: on its own timer it claims due
// deliveries from the outbox (FOR UPDATE SKIP LOCKED, so processes share the
// work without sending a delivery twice at once), POSTs them signed, and
// records the outcome. A claim moves the delivery a lease ahead before the
// request goes out, so a process killed mid-delivery leaves it to be
// claimed again: at least once. It uses one pool connection at a time and
// never runs on the data plane's path.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type pg from 'pg';
import type { Logger } from 'pino';
import { creditEventInserts, EVENT_ID_SQL } from './credit-events.sql';
import { SIGNATURE_HEADER, signatureHeader } from './webhook-signer';
import type { WebhookTargetGuard } from './webhook-target';

export interface BackoffOptions {
  /** The wait after the first failed attempt; it doubles after each further one. */
  baseMs: number;
  /** The longest wait between two attempts. */
  maxMs: number;
  /** Attempts in all; after the last failed one the delivery is `failed`. */
  attempts: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 10_000, maxMs: 6 * 3600_000, attempts: 12 };

export interface DispatcherOptions {
  pool: pg.Pool;
  targets: WebhookTargetGuard;
  logger: Logger;
  /** How often to look for due deliveries. */
  pollMs: number;
  /** How often to sweep for events no settlement writes (key expiry, restored credit, lowered limits). */
  sweepMs?: number;
  /** Micro-units of a minimal useful call: the at-limit threshold (CreditMonitor). */
  minimalCallMicros: number;
  backoff?: BackoffOptions;
  /** Per request: connect, send and answer. */
  timeoutMs?: number;
  /** Deliveries claimed per round. */
  batch?: number;
  random?: () => number;
}

interface Claimed {
  id: string;
  attempts: number;
  url: string;
  secret: string;
  event_id: string;
  type: string;
  created_at: Date;
  data: unknown;
}

interface Outcome {
  statusCode: number | null;
  error: string | null;
}

/** The wait before attempt `attempt + 1`: exponential from `baseMs`, capped, with ±20 % jitter so failed endpoints are not retried in lockstep. */
export function retryDelayMs(attempt: number, backoff: BackoffOptions, random: () => number = Math.random): number {
  const exact = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exact * (0.8 + 0.4 * random()));
}

const CLAIM_SQL = `with due as (
    select id from webhook_deliveries where state = 'pending' and next_attempt_at <= now()
    order by next_attempt_at limit $1 for update skip locked
  )
  update webhook_deliveries d set attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
  from due, webhook_events e, webhooks w
  where d.id = due.id and e.id = d.event_id and w.id = d.webhook_id
  returning d.id, d.attempts, w.url, w.secret, e.id as event_id, e.type, e.created_at, e.data`;

const ACCOUNT_MONTH = `to_char(now() at time zone a.timezone, 'YYYY-MM')`;
const SWEEP_CREDIT = creditEventInserts('month_totals', '$1', false);

/** Events no single change writes: thresholds and limits reached without a settlement crossing them, restored credit, keys about to expire. */
const SWEEP_SQL = `with month_totals as (
    select a.id as account_id, ${ACCOUNT_MONTH} as month, coalesce(u.amount_micros, 0) as amount_micros, a.credit_limit_micros, 0::bigint as before_micros
    from accounts a left join account_month_usage u on u.account_id = a.id and u.month = ${ACCOUNT_MONTH}
    where a.credit_limit_micros is not null
  ), thresholds as (
    ${SWEEP_CREDIT.thresholds}
  ), limits as (
    ${SWEEP_CREDIT.limit}
  ), restored as (
    -- An account that reached its limit in a month is restored once, when it is open again: a new month or a raised limit.
    insert into webhook_events (id, account_id, type, dedupe_key, data, created_at)
    select ${EVENT_ID_SQL}, e.account_id, 'credit.restored', 'credit.restored:' || e.account_id || ':' || (e.data ->> 'month'),
      jsonb_build_object('account_id', e.account_id, 'reached_month', e.data ->> 'month', 'month', ${ACCOUNT_MONTH},
        'used_micros', coalesce(u.amount_micros, 0), 'limit_micros', a.credit_limit_micros,
        'reason', case when e.data ->> 'month' = ${ACCOUNT_MONTH} then 'limit_raised' else 'new_month' end), now()
    from webhook_events e
    join accounts a on a.id = e.account_id
    left join account_month_usage u on u.account_id = a.id and u.month = ${ACCOUNT_MONTH}
    where e.type = 'credit.limit_reached' and e.created_at > now() - interval '62 days'
      and (a.credit_limit_micros is null or a.credit_limit_micros - coalesce(u.amount_micros, 0) >= $1)
    on conflict (dedupe_key) do nothing
  ), expiring as (
    -- Seven days before a key's last valid day (account zone), once per key and expiry date.
    insert into webhook_events (id, account_id, type, dedupe_key, data, created_at)
    select ${EVENT_ID_SQL}, k.account_id, 'key.expiring', 'key.expiring:' || k.id || ':' || k.expires_at,
      jsonb_build_object('api_key_id', k.id, 'name', k.name, 'expires_at', k.expires_at), now()
    from api_keys k join accounts a on a.id = k.account_id
    where k.status <> 'cancelled' and k.expires_at is not null
      and k.expires_at between (now() at time zone a.timezone)::date and (now() at time zone a.timezone)::date + 7
    on conflict (dedupe_key) do nothing
  )
  select 1`;

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastSweep = 0;
  private closed = false;
  private readonly backoff: BackoffOptions;
  private readonly agents: { http: http.Agent; https: https.Agent };
  /** Deliveries sent and their outcomes since start (metrics, tests). */
  readonly counts = { delivered: 0, retried: 0, failed: 0 };

  constructor(private readonly options: DispatcherOptions) {
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    // The agents resolve through the guard: the connection goes to the address it checked.
    const lookup = options.targets.lookup;
    this.agents = { http: new http.Agent({ lookup, keepAlive: false }), https: new https.Agent({ lookup, keepAlive: false }) };
  }

  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.tick(), this.options.pollMs);
    this.timer.unref();
  }

  /** One round now (tests; the timer calls it too). Resolves when the round's deliveries are recorded. */
  tick(): Promise<void> {
    if (!this.running) {
      this.running = this.round()
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'webhook dispatch round failed'))
        .finally(() => (this.running = null));
    }
    return this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Writes the events a sweep finds (also run by the timer every `sweepMs`). */
  async sweep(): Promise<void> {
    this.lastSweep = Date.now();
    await this.options.pool.query(SWEEP_SQL, [this.options.minimalCallMicros]);
  }

  private async round(): Promise<void> {
    if (Date.now() - this.lastSweep >= (this.options.sweepMs ?? 60_000)) await this.sweep();
    const timeoutMs = this.options.timeoutMs ?? 5_000;
    // The lease outlives the request's own timeout; a process killed mid-delivery hands it back after it.
    const leaseSeconds = Math.ceil((timeoutMs * 4) / 1000);
    const claimed = await this.options.pool.query<Claimed>(CLAIM_SQL, [this.options.batch ?? 10, leaseSeconds]);
    const outcomes = await Promise.all(claimed.rows.map(async (row) => [row, await this.send(row, timeoutMs)] as const));
    for (const [row, outcome] of outcomes) await this.record(row, outcome);
  }

  private async record(row: Claimed, outcome: Outcome): Promise<void> {
    const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const giveUp = !ok && row.attempts >= this.backoff.attempts;
    const state = ok ? 'delivered' : giveUp ? 'failed' : 'pending';
    const delayMs = ok || giveUp ? null : retryDelayMs(row.attempts, this.backoff, this.options.random);
    if (ok) this.counts.delivered++;
    else if (giveUp) this.counts.failed++;
    else this.counts.retried++;
    await this.options.pool.query(
      `update webhook_deliveries set state = $2, last_status_code = $3, last_error = $4,
         next_attempt_at = case when $5::float8 is null then null else now() + make_interval(secs => $5::float8 / 1000) end,
         delivered_at = case when $2 = 'delivered' then now() else null end
       where id = $1`,
      [row.id, state, outcome.statusCode, outcome.error?.slice(0, 500) ?? null, delayMs],
    );
  }

  /** One signed POST; never follows a redirect (a 3xx is a failed attempt). */
  private send(row: Claimed, timeoutMs: number): Promise<Outcome> {
    const body = JSON.stringify({ id: row.event_id, type: row.type, created_at: new Date(row.created_at).toISOString(), data: row.data });
    const url = new URL(row.url);
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'tsxt-gateway-webhooks',
      [SIGNATURE_HEADER]: signatureHeader(row.secret, body, Math.floor(Date.now() / 1000)),
    };
    return new Promise<Outcome>((resolve) => {
      const done = (outcome: Outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
      // An IP literal is connected to without a lookup: check it here (the agent's lookup checks names).
      const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const options = { method: 'POST', headers, agent: url.protocol === 'https:' ? this.agents.https : this.agents.http };
      let request: http.ClientRequest | null = null;
      const timer = setTimeout(() => {
        request?.destroy(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      (isIP(hostname) === 0 ? Promise.resolve() : this.options.targets.addressesOf(hostname))
        .then(() => {
          request = (url.protocol === 'https:' ? https : http).request(url, options, (response) => {
            response.resume();
            response.on('end', () => done({ statusCode: response.statusCode ?? null, error: errorOf(response.statusCode) }));
            response.on('error', (error) => done({ statusCode: response.statusCode ?? null, error: error.message }));
          });
          request.on('error', (error) => done({ statusCode: null, error: error.message }));
          request.end(body);
        })
        .catch((error: Error) => done({ statusCode: null, error: `refused: ${error.message}` }));
    });
  }
}

function errorOf(statusCode: number | undefined): string | null {
  if (statusCode !== undefined && statusCode >= 200 && statusCode < 300) return null;
  return `HTTP ${statusCode ?? 'without status'}`;
}
