import type pg from 'pg';
import type { Actor } from '../domain/actor';
import type { AccountService, AccountView } from '../domain/accounts/account.service';
import { isCalendarDate, nextDay, nextMonthStart, zoneDate, zoneMonth } from '../domain/zone-time';
import { conflict, invalid, notFound } from '../errors';
import { PRICE_TIERS, type Catalog, type PriceTier } from '../core/catalog.types';
import type { CreditMonitor } from './credit-monitor';
import { formatMicros } from '../core/decimal';
import { usageItem, type UsageItem, type UsageRow } from './usage-item';

// Re-exported so callers (the REST export, the GraphQL mapper, tests) keep one import for usage.
export { CSV_HEADER, csvRow } from './usage-csv';
export type { UsageItem } from './usage-item';

// Every view here is a sum of stored per-call integers (tokens, micro-units),
// read from the same rows: per-key usage, usage detail, the CSV export and
// settlement therefore agree item by item, and Σ keys = the account total.

export interface TierLine {
  tier: PriceTier;
  tokens: number;
  unit_price: string;
  amount: string;
}

export interface KeyUsage {
  api_key_id: string;
  start: string;
  end: string;
  currency: string;
  calls: number;
  tiers: TierLine[];
  total_tokens: number;
  total_amount: string;
}

/** One page of usage detail; the totals cover the whole filtered range, not just the page. */
export interface UsageList {
  total: number;
  page: number;
  page_size: number;
  items: UsageItem[];
  total_tokens: number;
  total_amount: string;
}

export interface UsageFilter {
  start: string;
  end: string;
  apiKeyId?: string;
  model?: string;
}

export interface SettlementKey {
  api_key_id: string;
  name: string;
  dimension: string;
  tiers: TierLine[];
  total_tokens: number;
  total_amount: string;
}

export interface Settlement {
  month: string;
  currency: string;
  status: 'open' | 'closed';
  closed_at: string | null;
  keys: SettlementKey[];
  total_tokens: number;
  total_amount: string;
}

export interface CreditStatus {
  credit_limit: string | null;
  currency: string;
  month: string;
  month_used: string;
  /** Held by admission for calls in flight (and slices of headroom processes took for calls about to come). */
  reserved: string;
  remaining: string | null;
  suspended: boolean;
  overflow: 'refuse' | 'lower_max_tokens';
}

interface TierRow {
  price_tier: 'thinking' | 'no_thinking';
  hit: number;
  miss: number;
  out: number;
  a_hit: number;
  a_miss: number;
  a_out: number;
}

/**
 * How long after a month's end its settlement may be closed: longer than a
 * usage record can wait for its group commit (statement timeout 10 s).
 */
const CLOSE_GRACE_MS = 60_000;

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
/** The days a usage range or a settlement month may cover (their exclusive ends must stay valid PostgreSQL dates). */
const FIRST_DAY = '1900-01-01';
const LAST_DAY = '9998-12-31';

const TIER_SUMS = `price_tier,
  sum(tokens_input_cache_hit)::bigint as hit, sum(tokens_input_cache_miss)::bigint as miss, sum(tokens_output)::bigint as out,
  sum(amount_input_cache_hit)::bigint as a_hit, sum(amount_input_cache_miss)::bigint as a_miss, sum(amount_output)::bigint as a_out`;

/** The columns a usage item shows (not `*`: the export parses a million of these). */
const ITEM_COLUMNS = `id, request_id, response_id, api_key_id, model, coalesce(requested_model, model) as requested_model, routed_model, provider, form, stream, thinking, status, estimated, route_tier, price_tier,
  tokens_input_cache_hit, tokens_input_cache_miss, tokens_output, total_tokens, amount_micros, created_at`;

function checkMonth(month: string): void {
  if (!MONTH.test(month) || month < FIRST_DAY.slice(0, 7) || month > LAST_DAY.slice(0, 7)) throw invalid('month', `month must be YYYY-MM, ${FIRST_DAY.slice(0, 7)} to ${LAST_DAY.slice(0, 7)}`);
}

/** created_at range of account-zone days [start, end] inclusive. */
const RANGE = `created_at >= ($2::date)::timestamp at time zone $3 and created_at < ($4::date)::timestamp at time zone $3`;

/**
 * Reads run on their own small pool (Database.reportPool), never the
 * metering pool; the control plane's gate (control-plane-gate.ts) decides how
 * many run at once, and for one account.
 */
export class UsageQueryService {
  constructor(
    private readonly pool: pg.Pool,
    private readonly accounts: AccountService,
    private readonly catalog: Catalog,
    private readonly credit: CreditMonitor,
  ) {}

  private tierLines(rows: TierRow[]): { tiers: TierLine[]; tokens: number; micros: number } {
    const sums = Object.fromEntries(PRICE_TIERS.map((t) => [t, { tokens: 0, micros: 0 }])) as Record<PriceTier, { tokens: number; micros: number }>;
    for (const row of rows) {
      const add = (kind: 'input_cache_hit' | 'input_cache_miss' | 'output', tokens: number, micros: number) => {
        const line = sums[`${row.price_tier}.${kind}`];
        line.tokens += tokens;
        line.micros += micros;
      };
      add('input_cache_hit', row.hit, row.a_hit);
      add('input_cache_miss', row.miss, row.a_miss);
      add('output', row.out, row.a_out);
    }
    let tokens = 0;
    let micros = 0;
    const tiers = PRICE_TIERS.map((tier) => {
      tokens += sums[tier].tokens;
      micros += sums[tier].micros;
      return { tier, tokens: sums[tier].tokens, unit_price: this.catalog.prices[tier].text, amount: formatMicros(sums[tier].micros) };
    });
    return { tiers, tokens, micros };
  }

  private dateRange(start: unknown, end: unknown, account: AccountView): { start: string; end: string } {
    const today = zoneDate(account.timezone);
    const s = start === undefined ? `${today.slice(0, 7)}-01` : start;
    const e = end === undefined ? today : end;
    if (typeof s !== 'string' || !isCalendarDate(s)) throw invalid('start', 'start must be a date YYYY-MM-DD');
    if (typeof e !== 'string' || !isCalendarDate(e)) throw invalid('end', 'end must be a date YYYY-MM-DD');
    if (e < s) throw invalid('end', 'end must not be before start');
    // Ranges end at the day after `end`: year 10000 (and year 0) are beyond PostgreSQL's dates.
    if (s < FIRST_DAY) throw invalid('start', `start must be ${FIRST_DAY} or later`);
    if (e > LAST_DAY) throw invalid('end', `end must be ${LAST_DAY} or earlier`);
    return { start: s, end: e };
  }

  /** Per-key usage. */
  async keyUsage(actor: Actor, apiKeyId: string, start: unknown, end: unknown): Promise<KeyUsage> {
    const account = await this.accounts.get(actor.accountId);
    const range = this.dateRange(start, end, account);
    const owner = await this.pool.query('select 1 from api_keys where id = $1 and account_id = $2', [apiKeyId, account.id]);
    if (owner.rowCount === 0) throw notFound('key_not_found', `API key ${apiKeyId} not found`);
    const result = await this.pool.query<TierRow & { calls: number }>(
      `select ${TIER_SUMS}, count(*)::bigint as calls from usage_records
       where account_id = $1 and ${RANGE} and api_key_id = $5 group by price_tier`,
      [account.id, range.start, account.timezone, nextDay(range.end), apiKeyId],
    );
    const lines = this.tierLines(result.rows);
    return {
      api_key_id: apiKeyId,
      start: range.start,
      end: range.end,
      currency: account.currency,
      calls: result.rows.reduce((n, r) => n + r.calls, 0),
      tiers: lines.tiers,
      total_tokens: lines.tokens,
      total_amount: formatMicros(lines.micros),
    };
  }

  private filterSql(account: AccountView, filter: UsageFilter): { where: string; params: unknown[] } {
    const params: unknown[] = [account.id, filter.start, account.timezone, nextDay(filter.end)];
    let where = `account_id = $1 and ${RANGE}`;
    if (filter.apiKeyId) {
      params.push(filter.apiKeyId);
      where += ` and api_key_id = $${params.length}`;
    }
    if (filter.model) {
      params.push(filter.model);
      where += ` and model = $${params.length}`;
    }
    return { where, params };
  }

  private async resolveFilter(actor: Actor, query: { start?: unknown; end?: unknown; apiKeyId?: string; model?: string }): Promise<{ account: AccountView; filter: UsageFilter }> {
    const account = await this.accounts.get(actor.accountId);
    const range = this.dateRange(query.start, query.end, account);
    return {
      account,
      filter: { ...range, ...(query.apiKeyId ? { apiKeyId: query.apiKeyId } : {}), ...(query.model ? { model: query.model } : {}) },
    };
  }

  /** The usage detail: one page, and totals over the whole filtered range. */
  async listUsage(
    actor: Actor,
    query: { start?: unknown; end?: unknown; apiKeyId?: string; model?: string },
    page: number,
    pageSize: number,
  ): Promise<UsageList> {
    const { account, filter } = await this.resolveFilter(actor, query);
    const { where, params } = this.filterSql(account, filter);
    const totals = await this.pool.query<{ n: number; tokens: number; micros: number }>(
      `select count(*)::bigint as n, coalesce(sum(total_tokens), 0)::bigint as tokens, coalesce(sum(amount_micros), 0)::bigint as micros
       from usage_records where ${where}`,
      params,
    );
    const rows = await this.pool.query<UsageRow>(
      `select ${ITEM_COLUMNS} from usage_records where ${where} order by created_at desc, id desc limit ${pageSize} offset ${(page - 1) * pageSize}`,
      params,
    );
    const t = totals.rows[0]!;
    return {
      total: t.n,
      page,
      page_size: pageSize,
      items: rows.rows.map(usageItem),
      total_tokens: t.tokens,
      total_amount: formatMicros(t.micros),
    };
  }

  /** Rows in keyset-paged batches, so a month of a million calls streams in flat memory. */
  async *exportRows(actor: Actor, query: { start?: unknown; end?: unknown; apiKeyId?: string }, batch = 1000): AsyncGenerator<UsageItem[]> {
    const { account, filter } = await this.resolveFilter(actor, query);
    const { where, params } = this.filterSql(account, filter);
    let after: ExportCursor | null = null;
    for (;;) {
      // Only the mapped items stay referenced while the caller writes them out.
      const page: { items: UsageItem[]; next: ExportCursor | null } = await this.exportPage(where, params, after, batch);
      if (page.items.length > 0) yield page.items;
      if (page.next === null) return;
      after = page.next;
    }
  }

  private async exportPage(where: string, params: unknown[], after: ExportCursor | null, batch: number): Promise<{ items: UsageItem[]; next: ExportCursor | null }> {
    const p = [...params];
    let keyset = '';
    if (after) {
      p.push(after.at, after.id);
      keyset = ` and (created_at, id) > ($${p.length - 1}::timestamptz, $${p.length})`;
    }
    const { rows } = await this.pool.query<UsageRow & { cursor_at: string }>(
      `select ${ITEM_COLUMNS}, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at
       from usage_records where ${where}${keyset} order by created_at, id limit ${batch}`,
      p,
    );
    const last = rows[rows.length - 1];
    return { items: rows.map(usageItem), next: rows.length < batch || !last ? null : { at: last.cursor_at, id: last.id } };
  }

  /** The month's settlement: the frozen statement once closed, else computed from the records. */
  async settlement(actor: Actor, month: string): Promise<Settlement> {
    checkMonth(month);
    const account = await this.accounts.get(actor.accountId);
    const closed = await this.pool.query<{ statement: Settlement; closed_at: Date }>(
      'select statement, closed_at from settlement_closures where account_id = $1 and month = $2',
      [account.id, month],
    );
    if (closed.rows[0]) return closed.rows[0].statement;
    return this.computeSettlement(account, month);
  }

  private async computeSettlement(account: AccountView, month: string): Promise<Settlement> {
    const result = await this.pool.query<TierRow & { api_key_id: string; name: string; dimension: string }>(
      `select u.api_key_id, k.name, k.dimension, ${TIER_SUMS.replace(/^price_tier/, 'u.price_tier')}
       from usage_records u join api_keys k on k.id = u.api_key_id
       where u.account_id = $1 and u.created_at >= ($2::date)::timestamp at time zone $3 and u.created_at < ($4::date)::timestamp at time zone $3
       group by u.api_key_id, k.name, k.dimension, u.price_tier order by u.api_key_id`,
      [account.id, `${month}-01`, account.timezone, nextMonthStart(month)],
    );
    const byKey = new Map<string, { name: string; dimension: string; rows: TierRow[] }>();
    for (const row of result.rows) {
      const entry = byKey.get(row.api_key_id) ?? { name: row.name, dimension: row.dimension, rows: [] };
      entry.rows.push(row);
      byKey.set(row.api_key_id, entry);
    }
    let tokens = 0;
    let micros = 0;
    const keys = [...byKey.entries()].map(([id, entry]) => {
      const lines = this.tierLines(entry.rows);
      tokens += lines.tokens;
      micros += lines.micros;
      return { api_key_id: id, name: entry.name, dimension: entry.dimension, tiers: lines.tiers, total_tokens: lines.tokens, total_amount: formatMicros(lines.micros) };
    });
    return { month, currency: account.currency, status: 'open', closed_at: null, keys, total_tokens: tokens, total_amount: formatMicros(micros) };
  }

  /**
   * Operator: freezes a finished month; the stored statement is what every
   * later read returns. Allowed from CLOSE_GRACE_MS after the month ended in
   * the account's zone: a call metered in the month's last moments is
   * committed (or has failed) by then, so no row of the month lands after
   * the statement was frozen.
   */
  async closeSettlement(accountId: string, month: string, now: Date = new Date()): Promise<Settlement> {
    checkMonth(month);
    const account = await this.accounts.get(accountId);
    if (month >= zoneMonth(account.timezone, new Date(now.getTime() - CLOSE_GRACE_MS))) {
      throw conflict('month_not_over', `month ${month} has not ended in ${account.timezone}, or ended less than ${CLOSE_GRACE_MS / 1000} s ago`);
    }
    const statement = await this.computeSettlement(account, month);
    const closedAt = new Date();
    const frozen: Settlement = { ...statement, status: 'closed', closed_at: closedAt.toISOString() };
    const inserted = await this.pool.query(
      `insert into settlement_closures (account_id, month, closed_at, statement) values ($1, $2, $3, $4)
       on conflict (account_id, month) do nothing`,
      [account.id, month, closedAt, JSON.stringify(frozen)],
    );
    if (inserted.rowCount === 0) throw conflict('already_closed', `month ${month} is already closed`);
    return frozen;
  }

  async creditStatus(actor: Actor): Promise<CreditStatus> {
    const account = await this.accounts.get(actor.accountId);
    const month = zoneMonth(account.timezone, new Date());
    // One round trip on the report pool, never metering's: the month-to-date
    // amount as committed by every process (this process's cache only learns
    // of others' writes when one crosses the limit), and the unexpired credit
    // leases of every process (a dead process's stop counting when they expire).
    const { rows } = await this.pool.query<{ used: number | null; reserved: string | null }>(
      `select (select amount_micros from account_month_usage where account_id = $1 and month = $2) as used,
              (select sum(amount_micros) from credit_leases where account_id = $1 and month = $2 and expires_at > now()) as reserved`,
      [account.id, month],
    );
    const amountMicros = Number(rows[0]?.used ?? 0);
    const limit = account.creditLimitMicros;
    const reserved = Math.max(0, Number(rows[0]?.reserved ?? 0));
    return {
      credit_limit: limit === null ? null : formatMicros(limit),
      currency: account.currency,
      month,
      month_used: formatMicros(amountMicros),
      reserved: formatMicros(reserved),
      remaining: limit === null ? null : formatMicros(Math.max(0, limit - amountMicros - reserved)),
      // At its limit (the same threshold as the keys' state): what is left cannot pay for a minimal useful call.
      suspended: this.credit.stateOf(limit, amountMicros) !== 'open',
      overflow: account.creditOverflow,
    };
  }
}

/**
 * Where the next export page starts. created_at is carried to the
 * microsecond, as text: a JS Date has only milliseconds, and a row stamped in
 * microseconds (imports, SQL) would compare after its own truncated cursor
 * and be exported twice.
 */
interface ExportCursor {
  at: string;
  id: string;
}
