import { txOf } from '../pg-transactor';
import { LockMode, UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import { isValidTimeZone } from '../../config';
import { CHANNELS, notifyChange } from '../../db/change-feed';
import { AccountSchema } from './account.entity';
import { newId } from '../../db/ids';
import { conflict, invalid, notFound } from '../../errors';
import { parseDecimal, toMicros, toSafeNumber } from '../../core/decimal';
import { assertCanMutate, type Actor } from '../actor';
import { parseRateLimit, type RateLimitJson } from '../../core/rate-limit';
import type { AuditService } from '../audit/audit.service';
import { inTransaction } from '../../db/transaction';

export interface AccountView {
  id: string;
  name: string;
  timezone: string;
  currency: string;
  /** Micro-units; null = unlimited. */
  creditLimitMicros: number | null;
  /** What admission does with a call whose worst case does not fit the remaining credit (docs/architecture.md §9). */
  creditOverflow: CreditOverflow;
  createdAt: Date;
}

export const CREDIT_OVERFLOW_POLICIES = ['refuse', 'lower_max_tokens'] as const;
export type CreditOverflow = (typeof CREDIT_OVERFLOW_POLICIES)[number];

export function parseCreditOverflow(text: string, field = 'overflow'): CreditOverflow {
  if ((CREDIT_OVERFLOW_POLICIES as readonly string[]).includes(text)) return text as CreditOverflow;
  throw invalid(field, `${field} must be one of ${CREDIT_OVERFLOW_POLICIES.join(', ')}, got ${JSON.stringify(text)}`);
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
  creditOverflow: parseCreditOverflow(a.creditOverflow),
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

  /** The rate limit new keys of the account get unless their creation names one (null = none). */
  async keyDefaults(actor: Actor): Promise<{ rateLimit: RateLimitJson | null }> {
    const account = await this.orm.em.fork().findOne(AccountSchema, { id: actor.accountId });
    if (!account) throw notFound('account_not_found', `account ${actor.accountId} not found`);
    return { rateLimit: account.keyRateLimit ?? null };
  }

  /** Sets the defaults for new keys (owners and admins); existing keys keep their limits. */
  async setKeyDefaults(actor: Actor, body: unknown): Promise<{ rateLimit: RateLimitJson | null }> {
    assertCanMutate(actor);
    if (typeof body !== 'object' || body === null || Array.isArray(body) || !('rate_limit' in body)) {
      throw invalid('rate_limit', 'rate_limit is required: an object with requests_per_minute, tokens_per_minute, concurrent_requests, or null for none');
    }
    for (const name of Object.keys(body)) {
      if (name !== 'rate_limit') throw invalid(name, `unknown field "${name}"; allowed: rate_limit`, 'unknown_field');
    }
    const rateLimit = parseRateLimit((body as { rate_limit: unknown }).rate_limit);
    return inTransaction(this.orm, async (em) => {
      const account = await em.findOne(AccountSchema, { id: actor.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!account) throw notFound('account_not_found', `account ${actor.accountId} not found`);
      this.audit.record(txOf(em), actor, 'account.key_defaults_set', null, { rate_limit: { from: account.keyRateLimit ?? null, to: rateLimit } });
      account.keyRateLimit = rateLimit;
      await em.flush();
      return { rateLimit };
    });
  }

  /**
   * Operator action: the limit, and what admission does with a call that does
   * not fit it (either may be left as is). Takes effect on every running
   * gateway through NOTIFY.
   */
  async setCreditLimit(actor: Actor, creditLimitMicros: number | null | undefined, creditOverflow?: CreditOverflow): Promise<AccountView> {
    const view = await inTransaction(this.orm, async (em) => {
      const account = await em.findOne(AccountSchema, { id: actor.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!account) throw notFound('account_not_found', `account ${actor.accountId} not found`);
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      if (creditLimitMicros !== undefined) {
        changes.credit_limit_micros = { from: account.creditLimitMicros ?? null, to: creditLimitMicros };
        account.creditLimitMicros = creditLimitMicros;
      }
      if (creditOverflow !== undefined) {
        changes.credit_overflow = { from: account.creditOverflow, to: creditOverflow };
        account.creditOverflow = creditOverflow;
      }
      this.audit.record(txOf(em), actor, 'account.credit_limit_set', null, changes);
      await em.flush();
      await notifyChange(em, CHANNELS.accounts, account.id);
      return toView(account);
    });
    this.onCommitted(view.id);
    return view;
  }
}
