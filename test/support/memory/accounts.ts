import type { AccountChanges, AccountRecord, AccountRepository } from '../../../src/domain/accounts/account.repository';
import type { Tx } from '../../../src/domain/transaction';
import { MemoryRows } from './transactor';

/**
 * accounts in memory: names unique, listed oldest first. The transactor runs
 * one unit of work at a time, which is what the row lock gives on PostgreSQL.
 */
export class MemoryAccountRepository extends MemoryRows<AccountRecord> implements AccountRepository {
  /** Accounts `lockForUpdate` was asked for, in order (for assertions). */
  readonly locked: string[] = [];

  async insert(_tx: Tx, account: AccountRecord): Promise<boolean> {
    if (this.all().some((a) => a.name === account.name)) return false;
    this.rows.set(account.id, structuredClone(account));
    return true;
  }

  async list(): Promise<AccountRecord[]> {
    return this.all()
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map((a) => structuredClone(a));
  }

  async get(id: string): Promise<AccountRecord | null> {
    const account = this.rows.get(id);
    return account ? structuredClone(account) : null;
  }

  async findByName(name: string): Promise<AccountRecord | null> {
    const account = this.all().find((a) => a.name === name);
    return account ? structuredClone(account) : null;
  }

  async lockForUpdate(_tx: Tx, id: string): Promise<AccountRecord | null> {
    this.locked.push(id);
    return this.get(id);
  }

  async update(_tx: Tx, id: string, changes: AccountChanges): Promise<void> {
    const account = this.rows.get(id);
    if (!account) throw new Error(`no account ${id}`);
    for (const [name, value] of Object.entries(changes)) {
      if (value !== undefined) Object.assign(account, { [name]: structuredClone(value) });
    }
  }

  /** Adds an account as the operator would (tests). */
  add(fields: Partial<AccountRecord> & { id: string }): AccountRecord {
    const account: AccountRecord = {
      name: fields.id,
      timezone: 'Asia/Shanghai',
      currency: 'CNY',
      creditLimitMicros: null,
      creditOverflow: 'refuse',
      keyRateLimit: null,
      createdAt: new Date(),
      ...fields,
    };
    this.rows.set(account.id, structuredClone(account));
    return account;
  }
}
