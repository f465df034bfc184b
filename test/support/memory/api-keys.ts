import type { AccountView } from '../../../src/domain/accounts/account.service';
import {
  KEY_SORT_FIELDS,
  type ApiKeyChanges,
  type ApiKeyRecord,
  type ApiKeyRepository,
  type CancelledKey,
  type HandOver,
  type KeyGrant,
  type KeyGrants,
  type KeyPageQuery,
  type KeyWrite,
} from '../../../src/domain/keys/api-key.repository';
import { graceEnded } from '../../../src/domain/keys/api-key.service';
import { effectiveStatus } from '../../../src/domain/keys/key-status';
import type { Tx } from '../../../src/domain/transaction';
import { MemoryRows } from './transactor';

type Sortable = string | number | Date | null;

function compare(a: Sortable, b: Sortable): number {
  const x = a instanceof Date ? a.getTime() : a;
  const y = b instanceof Date ? b.getTime() : b;
  return x === y ? 0 : (x as string | number) < (y as string | number) ? -1 : 1;
}

/**
 * api_keys in memory, with the table's rules a unit test relies on: the
 * live-name unique index (not cancelled, not rotated away), the secret hash
 * unique, derived states filtered as keys read, nulls last in either order,
 * and the sweep taking each due key once. `locks` records the rows locked.
 */
export class MemoryApiKeyRepository extends MemoryRows<ApiKeyRecord> implements ApiKeyRepository, KeyGrants {
  /** Accounts the grants join (the data plane's lookups). */
  readonly accounts = new Map<string, AccountView>();
  readonly locks: string[] = [];
  /** Lookups the data plane made (`hash:…` / `id:…`). */
  readonly lookups: string[] = [];

  async page(query: KeyPageQuery): Promise<{ total: number; items: ApiKeyRecord[] }> {
    const field = KEY_SORT_FIELDS[query.sort];
    const sign = query.order === 'asc' ? 1 : -1;
    const matching = this.all()
      .filter((k) => k.accountId === query.accountId)
      .filter((k) => !query.status || this.reads(k, query) === query.status)
      .filter((k) => !query.dimension || k.dimension === query.dimension)
      .filter((k) => !query.q || k.name.toLowerCase().includes(query.q.toLowerCase()))
      .sort((a, b) => {
        const x = a[field];
        const y = b[field];
        if (x === null || y === null) return x === y ? compare(a.id, b.id) * sign : x === null ? 1 : -1;
        return compare(x, y) * sign || compare(a.id, b.id) * sign;
      });
    return { total: matching.length, items: matching.slice(query.offset, query.offset + query.limit).map((k) => structuredClone(k)) };
  }

  private reads(key: ApiKeyRecord, query: KeyPageQuery): string {
    return effectiveStatus({
      stored: key.status,
      expiresAt: key.expiresAt,
      today: query.today,
      overCreditLimit: query.overLimit,
      graceEnded: graceEnded(key.cancelsAt, query.now),
    }).status;
  }

  async find(accountId: string, id: string): Promise<ApiKeyRecord | null> {
    const key = this.rows.get(id);
    return key && key.accountId === accountId ? structuredClone(key) : null;
  }

  async lock(_tx: Tx, accountId: string, id: string): Promise<ApiKeyRecord | null> {
    this.locks.push(id);
    return this.find(accountId, id);
  }

  async nameInUse(_tx: Tx, accountId: string, name: string, exceptId: string | null): Promise<boolean> {
    return this.all().some((k) => k.accountId === accountId && k.name === name && k.status !== 'cancelled' && k.id !== exceptId);
  }

  async insert(_tx: Tx, key: ApiKeyRecord): Promise<KeyWrite> {
    if (this.all().some((k) => k.secretHash === key.secretHash)) throw new Error('duplicate secret_hash');
    if (this.liveNameClash(key)) return 'name_taken';
    this.rows.set(key.id, structuredClone(key));
    return 'written';
  }

  async update(_tx: Tx, id: string, changes: ApiKeyChanges): Promise<KeyWrite> {
    const key = this.rows.get(id);
    if (!key) throw new Error(`no key ${id}`);
    const next = { ...key, ...structuredClone(changes) };
    if (this.liveNameClash(next)) return 'name_taken';
    this.rows.set(id, next);
    return 'written';
  }

  async handOver(tx: Tx, oldId: string, old: HandOver, successor: ApiKeyRecord): Promise<void> {
    const key = this.rows.get(oldId);
    if (!key) throw new Error(`no key ${oldId}`);
    this.rows.set(oldId, { ...key, ...structuredClone(old) });
    if ((await this.insert(tx, successor)) === 'name_taken') throw new Error('api_keys_live_name_unique');
  }

  async cancelGraceEnded(_tx: Tx, limit: number): Promise<CancelledKey[]> {
    const now = new Date();
    const due = this.all()
      .filter((k) => k.cancelsAt !== null && k.cancelsAt.getTime() <= now.getTime() && k.status !== 'cancelled')
      .sort((a, b) => a.cancelsAt!.getTime() - b.cancelsAt!.getTime())
      .slice(0, limit);
    for (const key of due) this.rows.set(key.id, { ...key, status: 'cancelled', cancelledAt: now });
    return due.map((k) => ({ id: k.id, accountId: k.accountId, was: k.status }));
  }

  async grantBySecretHash(hash: string): Promise<KeyGrant | undefined> {
    this.lookups.push(`hash:${hash}`);
    const key = this.all().find((k) => k.secretHash === hash);
    return key && this.grantOf(key);
  }

  async grantById(id: string): Promise<KeyGrant | undefined> {
    this.lookups.push(`id:${id}`);
    const key = this.rows.get(id);
    return key && this.grantOf(key);
  }

  private grantOf(key: ApiKeyRecord): KeyGrant | undefined {
    const account = this.accounts.get(key.accountId);
    if (!account) return undefined;
    const { id, name, status, expiresAt, cancelsAt, modelScope, rateLimit } = structuredClone(key);
    return { id, name, status, expiresAt, cancelsAt, modelScope, rateLimit, account };
  }

  /** api_keys_live_name_unique: (account, name) where status <> 'cancelled' and rotated_to is null. */
  private liveNameClash(key: ApiKeyRecord): boolean {
    const live = (k: ApiKeyRecord) => k.status !== 'cancelled' && k.rotatedTo === null;
    return live(key) && this.all().some((k) => k.id !== key.id && k.accountId === key.accountId && k.name === key.name && live(k));
  }
}
