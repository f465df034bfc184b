import type pg from 'pg';
import type { Logger } from 'pino';
import type { ProtocolForm, UpstreamUsage } from '../core/canonical';
import { CHANNELS } from '../db/change-feed';
import { isDatabaseUnavailable } from '../db/db-errors';
import { newId } from '../db/ids';
import { zoneMonth } from '../domain/zone-time';
import { type AppError, appError } from '../errors';
import { creditEventInserts } from '../domain/webhooks/credit-events.sql';
import type { CreditMonitor } from './credit-monitor';
import type { Reservation } from './credit-ledger';
import type { CallAmounts, MeteredTokens } from './tiers';

export type UsageStatus = 'ok' | 'upstream_error' | 'blocked' | 'client_aborted';

export interface UsageRecordInput {
  requestId: string;
  /** The Responses form's response id (`resp_…`), the key to its stored response. */
  responseId?: string | null;
  accountId: string;
  accountTimezone: string;
  apiKeyId: string;
  form: ProtocolForm;
  /** The neutral catalog model. */
  model: string;
  /** The name the caller sent: the neutral name or one of its aliases. */
  requestedModel: string;
  routedModel: string | null;
  provider: string | null;
  routeTier: string | null;
  routeScore: number | null;
  routeReasons: string[];
  thinking: boolean;
  stream: boolean;
  status: UsageStatus;
  errorCode: string | null;
  raw: UpstreamUsage;
  tokens: MeteredTokens;
  /** Some figure is the gateway's local count: the upstream's own usage never arrived (an abort, or a server that reports none). */
  estimated: boolean;
  amounts: CallAmounts;
  guardrailHits: Record<string, number>;
  latencyMs: number;
  ttftMs: number | null;
  /**
   * The credit admission reserved for the call (accounts with a limit): the
   * usage statement takes the reservation off this process's lease as it adds
   * the exact amount to the month's usage, and the commit settles it here; a
   * record that cannot be written releases it.
   */
  reservation?: Reservation | null;
  /**
   * When the call was metered; defaults to the moment `record` is called.
   * It stamps `created_at` and picks the account-zone month of the credit
   * ledger, so both always agree.
   */
  at?: Date;
}

interface Pending {
  input: UsageRecordInput;
  at: Date;
  /** performance.now() when it was queued: what the reply waits for its group commit is measured from here. */
  queued: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

const MAX_BATCH = 500;

/** The columns of usage_records and their types, as json_to_recordset reads a record. */
const USAGE_RECORD_COLUMNS = [
  ['id', 'text'],
  ['request_id', 'text'],
  ['account_id', 'text'],
  ['api_key_id', 'text'],
  ['form', 'text'],
  ['model', 'text'],
  ['requested_model', 'text'],
  ['routed_model', 'text'],
  ['provider', 'text'],
  ['route_tier', 'text'],
  ['route_score', 'real'],
  ['route_reasons', 'jsonb'],
  ['thinking', 'boolean'],
  ['stream', 'boolean'],
  ['status', 'text'],
  ['error_code', 'text'],
  ['price_tier', 'text'],
  ['raw_input_cache_hit', 'integer'],
  ['raw_input_cache_miss', 'integer'],
  ['raw_output', 'integer'],
  ['tokens_input_cache_hit', 'bigint'],
  ['tokens_input_cache_miss', 'bigint'],
  ['tokens_output', 'bigint'],
  ['amount_input_cache_hit', 'bigint'],
  ['amount_input_cache_miss', 'bigint'],
  ['amount_output', 'bigint'],
  ['total_tokens', 'bigint'],
  ['amount_micros', 'bigint'],
  ['guardrail_hits', 'jsonb'],
  ['latency_ms', 'integer'],
  ['ttft_ms', 'integer'],
  ['estimated', 'boolean'],
  ['response_id', 'text'],
  ['created_at', 'timestamptz'],
] as const;
const USAGE_COLUMNS = USAGE_RECORD_COLUMNS.map(([name]) => name).join(', ');
const USAGE_RECORD_TYPE = USAGE_RECORD_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ');
type UsageRow = Record<(typeof USAGE_RECORD_COLUMNS)[number][0], unknown>;

/** Credit events of the accounts this statement's totals carried across a threshold or to the limit. */
const CREDIT_EVENTS = creditEventInserts('totals', '$14', true);

/**
 * Group commit (docs/architecture.md §8): every call's record is committed before its reply
 * completes, and calls arriving while a transaction is open share the next
 * one. One transaction writes the records, adds to each key's used_tokens
 * and last_used_at, and adds to the account's month-to-date amount; when that
 * amount brings the account to its credit limit (CreditMonitor's at-limit
 * threshold) every process is told through NOTIFY.
 */
export class UsageRecorder {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;
  private readonly observers: Array<(input: UsageRecordInput) => void> = [];
  /**
   * Records committed, the seconds their replies waited in all for their
   * group commit, and the batches' statements: how many, and their seconds
   * from send to answer (metrics: wait − statement is the time a record
   * queued behind the batch ahead of it).
   */
  readonly commits = { records: 0, waitSeconds: 0, batches: 0, statementSeconds: 0 };

  constructor(
    private readonly pool: pg.Pool,
    private readonly credit: CreditMonitor,
    private readonly logger: Logger,
    /** GATEWAY_USAGE_SYNC_COMMIT: wait for the WAL flush (on) or only for the commit (off). */
    private readonly syncCommit = true,
    /** This process's name on its credit lease rows (CreditLedger.holder). */
    private readonly leaseHolder = '',
  ) {}

  /** Sees every record as it is queued (metrics); must not throw. */
  onRecord(observer: (input: UsageRecordInput) => void): void {
    this.observers.push(observer);
  }

  /** Resolves once the record is durable; rejects if it could not be written. */
  record(input: UsageRecordInput): Promise<void> {
    if (this.closed) return Promise.reject(new Error('usage recorder is closed'));
    for (const observe of this.observers) observe(input);
    return new Promise((resolve, reject) => {
      this.queue.push({ input, at: input.at ?? new Date(), queued: performance.now(), resolve, reject });
      if (!this.flushing) this.flushing = this.drain();
    });
  }

  get depth(): number {
    return this.queue.length;
  }

  private async drain(): Promise<void> {
    // Let the callers of this tick join the first batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        const sent = performance.now();
        await this.write(batch);
        const now = performance.now();
        this.commits.batches++;
        this.commits.statementSeconds += (now - sent) / 1000;
        for (const p of batch) {
          this.commits.waitSeconds += (now - p.queued) / 1000;
          p.input.reservation?.settle();
          p.resolve();
        }
        this.commits.records += batch.length;
      } catch (error) {
        this.logger.error({ err: error, records: batch.length }, 'usage batch failed');
        const failure = isDatabaseUnavailable(error) ? meteringUnavailable(error) : (error as Error);
        for (const p of batch) {
          p.input.reservation?.release();
          p.reject(failure);
        }
      }
    }
    this.flushing = null;
  }

  private async write(batch: Pending[]): Promise<void> {
    const rows: UsageRow[] = [];
    const keys = new Map<string, { tokens: number; lastUsed: Date | null }>();
    const months: MonthAmounts = new Map();
    const leases: MonthAmounts = new Map();
    for (const { input: r, at } of batch) {
      const tier = r.tokens.priceTier;
      rows.push({
        id: newId('use', at.getTime()),
        request_id: r.requestId,
        account_id: r.accountId,
        api_key_id: r.apiKeyId,
        form: r.form,
        model: r.model,
        requested_model: r.requestedModel,
        routed_model: r.routedModel,
        provider: r.provider,
        route_tier: r.routeTier,
        route_score: r.routeScore,
        route_reasons: r.routeReasons,
        thinking: r.thinking,
        stream: r.stream,
        status: r.status,
        error_code: r.errorCode,
        price_tier: tier,
        raw_input_cache_hit: r.raw.inputCacheHit,
        raw_input_cache_miss: r.raw.inputCacheMiss,
        raw_output: r.raw.output,
        tokens_input_cache_hit: r.tokens.inputCacheHit,
        tokens_input_cache_miss: r.tokens.inputCacheMiss,
        tokens_output: r.tokens.output,
        amount_input_cache_hit: r.amounts.tiers[`${tier}.input_cache_hit`].micros,
        amount_input_cache_miss: r.amounts.tiers[`${tier}.input_cache_miss`].micros,
        amount_output: r.amounts.tiers[`${tier}.output`].micros,
        total_tokens: r.amounts.totalTokens,
        amount_micros: r.amounts.totalMicros,
        guardrail_hits: r.guardrailHits,
        latency_ms: r.latencyMs,
        ttft_ms: r.ttftMs,
        estimated: r.estimated,
        response_id: r.responseId ?? null,
        created_at: at,
      });
      const key = keys.get(r.apiKeyId) ?? { tokens: 0, lastUsed: null };
      key.tokens += r.amounts.totalTokens;
      if (r.status === 'ok') key.lastUsed = at;
      keys.set(r.apiKeyId, key);
      addToMonth(months, r.accountId, zoneMonth(r.accountTimezone, at), r.amounts.totalMicros);
      if (r.reservation) addToMonth(leases, r.accountId, r.reservation.month, r.reservation.micros);
    }

    // One statement, so one round trip: under load every await on the
    // database waits its turn behind the event loop's other work, and the
    // five round trips of begin/insert/update/upsert/commit made the batch
    // (and so every call waiting for it) several times slower. A statement
    // is its own transaction: the records, the keys' totals, the month's
    // amount and the NOTIFY of an account crossing its credit limit commit
    // together or not at all. The records travel as one JSON array (one
    // native JSON.stringify; thirty-one PostgreSQL array literals were the
    // largest single allocator per call).
    const keyIds = [...keys.keys()];
    const slots = [...months.values()];
    const settled = [...leases.values()];
    // Named, so each connection parses and plans this statement once, not per batch.
    const totals = await this.pool.query<{ account_id: string; month: string; amount_micros: number; notified: number }>({
      name: 'usage_group_commit',
      text: `with inserted as (
         insert into usage_records (${USAGE_COLUMNS})
         select ${USAGE_COLUMNS} from json_to_recordset($1::json) as r(${USAGE_RECORD_TYPE})
         returning 1
       ), touched as (
         update api_keys k set used_tokens = k.used_tokens + v.tokens,
           last_used_at = case when v.last_used is null then k.last_used_at else greatest(coalesce(k.last_used_at, v.last_used), v.last_used) end
         from unnest($2::text[], $3::bigint[], $4::timestamptz[]) as v(id, tokens, last_used) where k.id = v.id
         returning 1
       ), added as (
         insert into account_month_usage as m (account_id, month, amount_micros)
         select * from unnest($5::text[], $6::text[], $7::bigint[])
         on conflict (account_id, month) do update set amount_micros = m.amount_micros + excluded.amount_micros
         returning m.account_id, m.month, m.amount_micros
       ), totals as (
         select added.account_id, added.month, added.amount_micros, a.credit_limit_micros, added.amount_micros - v.micros as before_micros
         from added
         join accounts a on a.id = added.account_id
         join unnest($5::text[], $6::text[], $7::bigint[]) as v(account_id, month, micros) on v.account_id = added.account_id and v.month = added.month
       ), settled as (
         -- The reserved calls leave this process's credit leases as their exact cost enters the month's usage.
         update credit_leases l set amount_micros = l.amount_micros - v.micros
         from unnest($10::text[], $11::text[], $12::bigint[]) as v(account_id, month, micros)
         where l.holder = $13 and l.account_id = v.account_id and l.month = v.month
         returning 1
       ), durability as (
         -- synchronous_commit for this statement's own transaction only (GATEWAY_USAGE_SYNC_COMMIT).
         select set_config('synchronous_commit', $9, true) as value
       ), crossed as (
         -- Tell every process the moment an account comes to its limit: what the limit leaves
         -- can no longer pay for a minimal useful call (CreditMonitor's threshold).
         select pg_notify($8, account_id) from totals
         where credit_limit_micros is not null
           and credit_limit_micros - amount_micros < $14 and credit_limit_micros - before_micros >= $14
       ), threshold_events as (
         -- Credit alerts enter the webhook outbox with the usage that crossed them (credit-events.sql.ts).
         ${CREDIT_EVENTS.thresholds}
       ), limit_events as (
         ${CREDIT_EVENTS.limit}
       )
       select account_id, month, amount_micros, (select count(*) from crossed)::int as notified, (select value from durability) as durability from totals`,
      values: [
        JSON.stringify(rows),
        keyIds,
        keyIds.map((id) => keys.get(id)!.tokens),
        keyIds.map((id) => keys.get(id)!.lastUsed),
        slots.map((slot) => slot.accountId),
        slots.map((slot) => slot.month),
        slots.map((slot) => slot.micros),
        CHANNELS.accounts,
        this.syncCommit ? 'on' : 'off',
        settled.map((lease) => lease.accountId),
        settled.map((lease) => lease.month),
        settled.map((lease) => lease.micros),
        this.leaseHolder,
        this.credit.minimalCallMicros,
      ],
    });
    for (const row of totals.rows) this.credit.observe(row.account_id, row.month, row.amount_micros);
  }

  /** Waits for every queued record to be written (graceful shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
  }
}

/** Micro-units per account and month (the month's usage, or the reservations leaving a lease), keyed `account|month`. */
type MonthAmounts = Map<string, { accountId: string; month: string; micros: number }>;

function addToMonth(amounts: MonthAmounts, accountId: string, month: string, micros: number): void {
  const key = `${accountId}|${month}`;
  const slot = amounts.get(key);
  if (slot) slot.micros += micros;
  else amounts.set(key, { accountId, month, micros });
}

/**
 * docs/architecture.md §8: a call whose usage record cannot be committed is not answered.
 * The caller sees a 503 (`overloaded_error` / `server_error`) it may retry.
 */
function meteringUnavailable(cause: unknown): AppError {
  return appError('meteringUnavailable', { cause });
}
