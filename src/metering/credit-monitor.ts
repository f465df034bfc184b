import type pg from 'pg';
import type { AccountView } from '../domain/accounts/account.service';
import type { CreditGate } from '../domain/keys/api-key.service';
import { zoneMonth } from '../domain/zone-time';

interface Entry {
  month: string;
  amountMicros: number;
}

/**
 * Where an account stands against its limit (docs/architecture.md §9, spec §3):
 * `open`; `at_limit`, once what the limit leaves (limit − settled
 * month-to-date) cannot pay for a minimal useful call, when every key reads
 * suspended and every call gets 429; `over_limit`, once settled usage has
 * reached the limit itself (the operator lowered it), when the calls in
 * flight are cut too. Calls admitted before the account reached its limit
 * hold reservations within it, so they finish.
 */
export type CreditState = 'open' | 'at_limit' | 'over_limit';

/** The one threshold of the at-limit state: the usage statement's NOTIFY and every reader use it. */
export function creditState(limitMicros: number | null, settledMicros: number, minimalCallMicros: number): CreditState {
  if (limitMicros === null) return 'open';
  if (settledMicros >= limitMicros) return 'over_limit';
  return limitMicros - settledMicros < minimalCallMicros ? 'at_limit' : 'open';
}

/**
 * Month-to-date amounts per account, cached per process. The metering
 * transaction maintains `account_month_usage`; this process learns of its
 * own writes directly and of other processes' through NOTIFY (the recorder
 * notifies when an account reaches its limit; an operator changing the limit
 * notifies too). The month is read in the account's zone, so the turn of the
 * month restores keys without any job.
 */
export class CreditMonitor implements CreditGate {
  private readonly cache = new Map<string, Entry>();
  /**
   * Bumped whenever an account's entry is observed or forgotten (and for all
   * accounts by `clear`): a database read that raced with either is older
   * than what the cache learnt meanwhile — e.g. the crossing NOTIFY — and
   * must not be cached over it.
   */
  private readonly versions = new Map<string, number>();
  private epoch = 0;

  constructor(
    private readonly pool: pg.Pool,
    /** Micro-units of the minimal useful call (Catalog.minimalCallMicros): the at-limit threshold. */
    readonly minimalCallMicros: number,
  ) {}

  private version(accountId: string): string {
    return `${this.epoch}:${this.versions.get(accountId) ?? 0}`;
  }

  private bump(accountId: string): void {
    this.versions.set(accountId, (this.versions.get(accountId) ?? 0) + 1);
  }

  async monthToDate(account: AccountView, now = new Date()): Promise<{ month: string; amountMicros: number }> {
    const month = zoneMonth(account.timezone, now);
    const cached = this.cache.get(account.id);
    if (cached && cached.month === month) return cached;
    return this.load(account.id, month);
  }

  private async load(accountId: string, month: string): Promise<Entry> {
    const version = this.version(accountId);
    const result = await this.pool.query<{ amount_micros: number }>(
      'select amount_micros from account_month_usage where account_id = $1 and month = $2',
      [accountId, month],
    );
    const entry = { month, amountMicros: result.rows[0]?.amount_micros ?? 0 };
    if (this.version(accountId) === version) {
      this.cache.set(accountId, entry);
      return entry;
    }
    // Something arrived while we read (our own commit, or a NOTIFY): a
    // month's amount only grows, so the larger of the two is the newer.
    const newer = this.cache.get(accountId);
    if (newer && newer.month === month && newer.amountMicros >= entry.amountMicros) return newer;
    return entry;
  }

  async state(account: AccountView): Promise<CreditState> {
    if (account.creditLimitMicros === null) return 'open';
    const { amountMicros } = await this.monthToDate(account);
    return this.stateOf(account.creditLimitMicros, amountMicros);
  }

  stateOf(limitMicros: number | null, settledMicros: number): CreditState {
    return creditState(limitMicros, settledMicros, this.minimalCallMicros);
  }

  /** At (or over) its limit: every key of the account reads suspended (`credit_limit`). */
  async isOverLimit(account: AccountView): Promise<boolean> {
    return (await this.state(account)) !== 'open';
  }

  /** Called by the recorder after its transaction commits. */
  observe(accountId: string, month: string, amountMicros: number): void {
    const cached = this.cache.get(accountId);
    this.bump(accountId);
    if (!cached || cached.month <= month) this.cache.set(accountId, { month, amountMicros });
  }

  forget(accountId: string): void {
    this.bump(accountId);
    this.cache.delete(accountId);
  }

  clear(): void {
    this.epoch++;
    this.cache.clear();
  }
}
