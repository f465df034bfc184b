import type pg from 'pg';
import type { AccountView } from '../domain/accounts/account.service';
import type { CreditGate } from '../domain/keys/api-key.service';
import { zoneMonth } from '../domain/zone-time';

interface Entry {
  month: string;
  amountMicros: number;
}

/**
 * Month-to-date amounts per account, cached per process. The metering
 * transaction maintains `account_month_usage`; this process learns of its
 * own writes directly and of other processes' through NOTIFY (the recorder
 * notifies when an account crosses its limit; an operator changing the limit
 * notifies too). The month is read in the account's zone, so the turn of the
 * month restores keys without any job.
 */
export class CreditMonitor implements CreditGate {
  private readonly cache = new Map<string, Entry>();

  constructor(private readonly pool: pg.Pool) {}

  async monthToDate(account: AccountView, now = new Date()): Promise<{ month: string; amountMicros: number }> {
    const month = zoneMonth(account.timezone, now);
    const cached = this.cache.get(account.id);
    if (cached && cached.month === month) return cached;
    const result = await this.pool.query<{ amount_micros: number }>(
      'select amount_micros from account_month_usage where account_id = $1 and month = $2',
      [account.id, month],
    );
    const entry = { month, amountMicros: result.rows[0]?.amount_micros ?? 0 };
    this.cache.set(account.id, entry);
    return entry;
  }

  async isOverLimit(account: AccountView): Promise<boolean> {
    if (account.creditLimitMicros === null) return false;
    const { amountMicros } = await this.monthToDate(account);
    return amountMicros >= account.creditLimitMicros;
  }

  /** Called by the recorder after its transaction commits. */
  observe(accountId: string, month: string, amountMicros: number): void {
    const cached = this.cache.get(accountId);
    if (!cached || cached.month <= month) this.cache.set(accountId, { month, amountMicros });
  }

  forget(accountId: string): void {
    this.cache.delete(accountId);
  }

  clear(): void {
    this.cache.clear();
  }
}
