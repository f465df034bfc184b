import { isValidTimeZone } from '../../config';
import { CHANNELS } from '../../db/change-feed';
import { newId } from '../../db/ids';
import { conflict, invalid, notFound } from '../../errors';
import { parseDecimal, toMicros, toSafeNumber } from '../../core/decimal';
import { assertCanMutate, type Actor } from '../actor';
import { parseRateLimit, type RateLimitJson } from '../../core/rate-limit';
import type { AuditService } from '../audit/audit.service';
import type { Transactor } from '../transaction';
import type { AccountRecord, AccountRepository } from './account.repository';

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

/** An account as every reader sees it (the key lookup's join too): the overflow setting parsed. */
export const accountView = (a: Omit<AccountRecord, 'keyRateLimit'>): AccountView => ({
  id: a.id,
  name: a.name,
  timezone: a.timezone,
  currency: a.currency,
  creditLimitMicros: a.creditLimitMicros,
  creditOverflow: parseCreditOverflow(a.creditOverflow),
  createdAt: a.createdAt,
});

export interface CreateAccountInput {
  name: string;
  /** IANA zone; the gateway's default when absent. */
  timezone?: string;
  creditLimitMicros?: number | null;
}

/** The defaults new keys of an account get. */
export interface KeyDefaultsInput {
  /** null = no rate limit. */
  rateLimit: RateLimitJson | null;
}

const accountNotFound = (accountId: string) => notFound('account_not_found', `account ${accountId} not found`);

export class AccountService {
  constructor(
    private readonly transactor: Transactor,
    private readonly accounts: AccountRepository,
    private readonly audit: AuditService,
    private readonly defaults: { timezone: string; currency: string },
    /** Called after an account change commits (the process-local half of NOTIFY). */
    private readonly onCommitted: (accountId: string) => void = () => undefined,
  ) {}

  async create(input: CreateAccountInput): Promise<AccountView> {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 128) throw invalid('name', 'name must be 1–128 characters');
    const timezone = input.timezone ?? this.defaults.timezone;
    if (!isValidTimeZone(timezone)) throw invalid('timezone', `timezone "${timezone}" is not an IANA time zone`);
    const account: AccountRecord = {
      id: newId('acc'),
      name,
      timezone,
      currency: this.defaults.currency,
      creditLimitMicros: input.creditLimitMicros ?? null,
      creditOverflow: 'refuse',
      keyRateLimit: null,
      createdAt: new Date(),
    };
    await this.transactor.run(async (tx) => {
      if (!(await this.accounts.insert(tx, account))) throw conflict('account_name_taken', `an account named "${name}" exists`, 'name');
    });
    return accountView(account);
  }

  async list(): Promise<AccountView[]> {
    return (await this.accounts.list()).map(accountView);
  }

  async get(accountId: string): Promise<AccountView> {
    const account = await this.accounts.get(accountId);
    if (!account) throw accountNotFound(accountId);
    return accountView(account);
  }

  async findByName(name: string): Promise<AccountView | null> {
    const account = await this.accounts.findByName(name);
    return account ? accountView(account) : null;
  }

  /** The rate limit new keys of the account get unless their creation names one (null = none). */
  async keyDefaults(actor: Actor): Promise<{ rateLimit: RateLimitJson | null }> {
    const account = await this.accounts.get(actor.accountId);
    if (!account) throw accountNotFound(actor.accountId);
    return { rateLimit: account.keyRateLimit };
  }

  /** Sets the defaults for new keys (owners and admins); existing keys keep their limits. */
  async setKeyDefaults(actor: Actor, input: KeyDefaultsInput): Promise<{ rateLimit: RateLimitJson | null }> {
    assertCanMutate(actor);
    // The budgets' ranges hold whichever transport the limit came through (an all-null limit is none).
    const rateLimit = parseRateLimit(input.rateLimit);
    return this.transactor.run(async (tx) => {
      const account = await this.accounts.lockForUpdate(tx, actor.accountId);
      if (!account) throw accountNotFound(actor.accountId);
      this.audit.record(tx, actor, 'account.key_defaults_set', null, { rate_limit: { from: account.keyRateLimit, to: rateLimit } });
      await this.accounts.update(tx, account.id, { keyRateLimit: rateLimit });
      return { rateLimit };
    });
  }

  /**
   * Operator action: the limit, and what admission does with a call that does
   * not fit it (either may be left as is). Takes effect on every running
   * gateway through NOTIFY.
   */
  async setCreditLimit(actor: Actor, creditLimitMicros: number | null | undefined, creditOverflow?: CreditOverflow): Promise<AccountView> {
    const view = await this.transactor.run(async (tx) => {
      const account = await this.accounts.lockForUpdate(tx, actor.accountId);
      if (!account) throw accountNotFound(actor.accountId);
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      if (creditLimitMicros !== undefined) {
        changes.credit_limit_micros = { from: account.creditLimitMicros, to: creditLimitMicros };
        account.creditLimitMicros = creditLimitMicros;
      }
      if (creditOverflow !== undefined) {
        changes.credit_overflow = { from: account.creditOverflow, to: creditOverflow };
        account.creditOverflow = creditOverflow;
      }
      this.audit.record(tx, actor, 'account.credit_limit_set', null, changes);
      await this.accounts.update(tx, account.id, { creditLimitMicros, creditOverflow });
      await tx.notify(CHANNELS.accounts, account.id);
      return accountView(account);
    });
    this.onCommitted(view.id);
    return view;
  }
}
