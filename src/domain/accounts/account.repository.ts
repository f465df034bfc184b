// The accounts table: rows read on a fork, written (and locked) inside the
// caller's unit of work. The row lock is what other features take to order
// their first writes for an account (guardrail overrides, credit alerts,
// webhook creation).
import { LockMode, type MikroORM } from '@mikro-orm/postgresql';
import type { RateLimitJson } from '../../core/rate-limit';
import { emOf } from '../pg-transactor';
import { flushUnlessTaken } from '../pg-unique';
import type { Tx } from '../transaction';
import { AccountSchema, type Account } from './account.entity';

export interface AccountRecord {
  id: string;
  name: string;
  timezone: string;
  currency: string;
  /** Micro-units; null = unlimited. */
  creditLimitMicros: number | null;
  creditOverflow: string;
  /** The rate limit new keys get unless their creation names one; null = none. */
  keyRateLimit: RateLimitJson | null;
  createdAt: Date;
}

/** The fields a change may set. */
export type AccountChanges = Partial<Pick<AccountRecord, 'creditLimitMicros' | 'creditOverflow' | 'keyRateLimit'>>;

export interface AccountRepository {
  /** Adds the account; false (nothing added) when its name is taken. */
  insert(tx: Tx, account: AccountRecord): Promise<boolean>;
  /** Every account, oldest first. */
  list(): Promise<AccountRecord[]>;
  get(id: string): Promise<AccountRecord | null>;
  findByName(name: string): Promise<AccountRecord | null>;
  /** The account, its row locked until the unit of work ends (null when there is none). */
  lockForUpdate(tx: Tx, id: string): Promise<AccountRecord | null>;
  update(tx: Tx, id: string, changes: AccountChanges): Promise<void>;
}

const record = (a: Account): AccountRecord => ({
  id: a.id,
  name: a.name,
  timezone: a.timezone,
  currency: a.currency,
  creditLimitMicros: a.creditLimitMicros ?? null,
  creditOverflow: a.creditOverflow,
  keyRateLimit: a.keyRateLimit ?? null,
  createdAt: a.createdAt,
});

export class PgAccountRepository implements AccountRepository {
  constructor(private readonly orm: MikroORM) {}

  async insert(tx: Tx, account: AccountRecord): Promise<boolean> {
    const em = emOf(tx);
    em.create(AccountSchema, account);
    return flushUnlessTaken(em);
  }

  async list(): Promise<AccountRecord[]> {
    return (await this.orm.em.fork().find(AccountSchema, {}, { orderBy: { createdAt: 'asc' } })).map(record);
  }

  async get(id: string): Promise<AccountRecord | null> {
    const account = await this.orm.em.fork().findOne(AccountSchema, { id });
    return account ? record(account) : null;
  }

  async findByName(name: string): Promise<AccountRecord | null> {
    const account = await this.orm.em.fork().findOne(AccountSchema, { name });
    return account ? record(account) : null;
  }

  async lockForUpdate(tx: Tx, id: string): Promise<AccountRecord | null> {
    const account = await emOf(tx).findOne(AccountSchema, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    return account ? record(account) : null;
  }

  async update(tx: Tx, id: string, changes: AccountChanges): Promise<void> {
    const em = emOf(tx);
    const account = await em.findOneOrFail(AccountSchema, { id });
    if (changes.creditLimitMicros !== undefined) account.creditLimitMicros = changes.creditLimitMicros;
    if (changes.creditOverflow !== undefined) account.creditOverflow = changes.creditOverflow;
    if (changes.keyRateLimit !== undefined) account.keyRateLimit = changes.keyRateLimit;
    await em.flush();
  }
}
