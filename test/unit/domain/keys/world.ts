// The key services over in-memory tables: two accounts, a catalog of three
// models, a credit gate the test sets, and what each commit told the process.
import pino from 'pino';
import type { RateLimitJson } from '../../../../src/core/rate-limit';
import type { AccountView } from '../../../../src/domain/accounts/account.service';
import type { Actor, Role } from '../../../../src/domain/actor';
import { AuditService } from '../../../../src/domain/audit/audit.service';
import { ApiKeyService, type KeyAccounts } from '../../../../src/domain/keys/api-key.service';
import { KeyRotationService } from '../../../../src/domain/keys/key-rotation.service';
import { KeyRotationSweep } from '../../../../src/domain/keys/key-rotation.sweep';
import { notFound } from '../../../../src/errors';
import { MemoryApiKeyRepository } from '../../../support/memory/api-keys';
import { MemoryAuditRepository } from '../../../support/memory/audit';
import { MemoryTransactor } from '../../../support/memory/transactor';

export const MODELS = ['tsxt-general', 'tsxt-coder', 'tsxt-lite'];

export const account = (id: string, timezone = 'Asia/Shanghai'): AccountView => ({
  id,
  name: `account ${id}`,
  timezone,
  currency: 'CNY',
  creditLimitMicros: null,
  creditOverflow: 'refuse',
  createdAt: new Date('2026-01-01T00:00:00Z'),
});

export const actor = (accountId: string, role: Role = 'owner'): Actor => ({ accountId, userId: `usr_${accountId}`, label: `${role}@${accountId}.example`, role, ip: '198.51.100.7' });

export class FakeAccounts implements KeyAccounts {
  readonly views = new Map<string, AccountView>();
  readonly defaults = new Map<string, RateLimitJson | null>();

  async get(accountId: string): Promise<AccountView> {
    const view = this.views.get(accountId);
    if (!view) throw notFound('account_not_found', `account ${accountId} not found`);
    return view;
  }

  async keyDefaults(a: Actor): Promise<{ rateLimit: RateLimitJson | null }> {
    await this.get(a.accountId);
    return { rateLimit: this.defaults.get(a.accountId) ?? null };
  }
}

export function keysWorld() {
  const rows = new MemoryApiKeyRepository();
  const events = new MemoryAuditRepository();
  const tx = new MemoryTransactor().register(rows, events);
  const accounts = new FakeAccounts();
  for (const id of ['acc_a', 'acc_b']) {
    accounts.views.set(id, account(id));
    rows.accounts.set(id, account(id));
  }
  const overLimit = new Set<string>();
  const credit = { isOverLimit: async (a: AccountView) => overLimit.has(a.id) };
  const models = { has: (name: string) => MODELS.includes(name), names: () => MODELS };
  /** Key ids whose change committed, as the process-local signal saw them. */
  const committed: string[] = [];
  const audit = new AuditService(events);
  const keys = new ApiKeyService(rows, tx, accounts, audit, models, credit, (id) => committed.push(id));
  const rotations = new KeyRotationService(rows, tx, keys, audit, (id) => committed.push(id));
  const sweep = new KeyRotationSweep(rows, tx, audit, pino({ level: 'silent' }), (id) => committed.push(id));
  return { rows, events, tx, accounts, overLimit, committed, keys, rotations, sweep };
}

export const newKey = (overrides: Partial<{ name: string; dimension: string; modelScope: string[]; expiresAt: string | null; rateLimit: RateLimitJson | null }> = {}) => ({
  name: 'report-bot',
  dimension: '部门',
  modelScope: ['tsxt-general'],
  ...overrides,
});

/** `YYYY-MM-DD` n days from today in the zone. */
export function dayFromToday(n: number, zone = 'Asia/Shanghai'): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  const d = new Date(`${today}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}
