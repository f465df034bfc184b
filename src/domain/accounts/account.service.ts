import { LockMode, UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import { isValidTimeZone } from '../../config';
import { CHANNELS, notifyChange } from '../../db/change-feed';
import { AccountSchema } from '../../db/entities/account.entity';
import { newId } from '../../db/ids';
import { conflict, invalid, notFound } from '../../errors';
import { parseDecimal, toMicros, toSafeNumber } from '../../metering/decimal';
import type { Actor } from '../actor';
import type { AuditService } from '../audit/audit.service';
import { inTransaction } from '../../db/transaction';

export interface AccountView {
  id: string;
  name: string;
  timezone: string;
  currency: string;
  /** Micro-units; null = unlimited. */
  creditLimitMicros: number | null;
  createdAt: Date;
}

/** A credit limit given as a decimal string ("5000", "12.5") → micro-units; `none` → null. */
export function parseCreditLimit(text: string, field = 'credit_limit'): number | null {
  if (text === 'none') return null;
  try {
    const micros = toMicros(parseDecimal(text));
    if (micros < 0n) throw new RangeError('must not be negative');
    return toSafeNumber(micros, field);
  } catch (error) {
    throw invalid(field, `${field} ${(error as Error).message}; give an amount like "5000" or "12.50", or "none"`);
  }
}

const toView = (a: InstanceType<typeof AccountSchema.class>): AccountView => ({
  id: a.id,
  name: a.name,
  timezone: a.timezone,
  currency: a.currency,
  creditLimitMicros: a.creditLimitMicros ?? null,
  createdAt: a.createdAt,
});

export class AccountService {
  constructor(
    private readonly orm: MikroORM,
    private readonly audit: AuditService,
    private readonly defaults: { timezone: string; currency: string },
    /** Called after an account change commits (the process-local half of NOTIFY). */
    private readonly onCommitted: (accountId: string) => void = () => undefined,
  ) {}

  async create(input: { name: string; timezone?: string; creditLimitMicros?: number | null }): Promise<AccountView> {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 128) throw invalid('name', 'name must be 1–128 characters');
    const timezone = input.timezone ?? this.defaults.timezone;
    if (!isValidTimeZone(timezone)) throw invalid('timezone', `timezone "${timezone}" is not an IANA time zone`);
    const em = this.orm.em.fork();
    const account = em.create(AccountSchema, {
      id: newId('acc'),
      name,
      timezone,
      currency: this.defaults.currency,
      creditLimitMicros: input.creditLimitMicros ?? null,
      createdAt: new Date(),
    });
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw conflict('account_name_taken', `an account named "${name}" exists`, 'name');
      throw error;
    }
    return toView(account);
  }

  async list(): Promise<AccountView[]> {
    const rows = await this.orm.em.fork().find(AccountSchema, {}, { orderBy: { createdAt: 'asc' } });
    return rows.map(toView);
  }

  async get(accountId: string): Promise<AccountView> {
    const account = await this.orm.em.fork().findOne(AccountSchema, { id: accountId });
    if (!account) throw notFound('account_not_found', `account ${accountId} not found`);
    return toView(account);
  }

  async findByName(name: string): Promise<AccountView | null> {
    const account = await this.orm.em.fork().findOne(AccountSchema, { name });
    return account ? toView(account) : null;
  }

  /** Operator action: takes effect on every running gateway through NOTIFY. */
  async setCreditLimit(actor: Actor, creditLimitMicros: number | null): Promise<AccountView> {
    const view = await inTransaction(this.orm, async (em) => {
      const account = await em.findOne(AccountSchema, { id: actor.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!account) throw notFound('account_not_found', `account ${actor.accountId} not found`);
      const before = account.creditLimitMicros ?? null;
      account.creditLimitMicros = creditLimitMicros;
      this.audit.record(em, actor, 'account.credit_limit_set', null, {
        credit_limit_micros: { from: before, to: creditLimitMicros },
      });
      await em.flush();
      await notifyChange(em, CHANNELS.accounts, account.id);
      return toView(account);
    });
    this.onCommitted(view.id);
    return view;
  }
}
