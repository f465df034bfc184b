// The api_keys table: the control plane's reads and writes (ORM, reads on a
// fork, writes in the caller's unit of work), the rotation sweep's
// cancellation of keys whose grace has ended, and the data plane's lookups
// of a presented key (raw SQL on the pool: the per-request hot path takes no
// ORM and one round trip). Metering's usage transaction updates used_tokens
// and last_used_at itself (usage-recorder.ts): that write commits with the
// usage record it counts.
import { LockMode, type MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { RateLimitJson } from '../../core/rate-limit';
import { accountView, type AccountView } from '../accounts/account.service';
import { emOf } from '../pg-transactor';
import { flushUnlessTaken } from '../pg-unique';
import type { Tx } from '../transaction';
import { ApiKeySchema, type ApiKey } from './api-key.entity';
import type { KeyStatus, StoredStatus } from './key-status';

/** A key as stored. */
export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  dimension: string;
  status: StoredStatus;
  modelScope: string[];
  /** Last valid day `YYYY-MM-DD`, or null for never. */
  expiresAt: string | null;
  rateLimit: RateLimitJson | null;
  /** SHA-256 (hex) of the secret; the secret itself is never stored. */
  secretHash: string;
  secretHint: string;
  usedTokens: number;
  lastUsedAt: Date | null;
  createdAt: Date;
  cancelledAt: Date | null;
  rotatedFrom: string | null;
  rotatedTo: string | null;
  cancelsAt: Date | null;
}

/** What a control-plane change may write. */
export type ApiKeyChanges = Partial<Pick<ApiKeyRecord, 'name' | 'dimension' | 'modelScope' | 'expiresAt' | 'rateLimit' | 'status' | 'cancelledAt'>>;

/** What a rotation writes on the key it replaces. */
export type HandOver = Pick<ApiKeyRecord, 'rotatedTo' | 'cancelsAt' | 'status'>;

export const KEY_SORTS = ['created_at', 'last_used_at', 'expires_at', 'name', 'used_tokens'] as const;
export type KeySort = (typeof KEY_SORTS)[number];

export interface KeyPageQuery {
  accountId: string;
  /** A state as keys read (derived: expired, credit-limit suspended, grace ended), not as stored. */
  status?: KeyStatus;
  dimension?: string;
  /** Name contains, case-insensitive. */
  q?: string;
  /** Nulls last either way; ties by id in the same order. */
  sort: KeySort;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
  /** What derived states read against: today in the account's zone, now, and whether the account is at its credit limit. */
  today: string;
  now: Date;
  overLimit: boolean;
}

/** A write that may meet the live-name uniqueness (a concurrent create or rename took the name first). */
export type KeyWrite = 'written' | 'name_taken';

/** A key cancelled by the rotation sweep, and the stored state it had. */
export interface CancelledKey {
  id: string;
  accountId: string;
  was: StoredStatus;
}

export interface ApiKeyRepository {
  /** One account's keys matching the query, a page of them, and how many match. */
  page(query: KeyPageQuery): Promise<{ total: number; items: ApiKeyRecord[] }>;
  /** A key of the account, or null (another account's key is not found). */
  find(accountId: string, id: string): Promise<ApiKeyRecord | null>;
  /** The same, locked until the unit of work ends. */
  lock(tx: Tx, accountId: string, id: string): Promise<ApiKeyRecord | null>;
  /** Whether a key of the account other than `exceptId`, not cancelled, has the name. */
  nameInUse(tx: Tx, accountId: string, name: string, exceptId: string | null): Promise<boolean>;
  insert(tx: Tx, key: ApiKeyRecord): Promise<KeyWrite>;
  update(tx: Tx, id: string, changes: ApiKeyChanges): Promise<KeyWrite>;
  /** A rotation: the old key (locked) names its successor and leaves the live-name index, then the successor takes the name. */
  handOver(tx: Tx, oldId: string, old: HandOver, successor: ApiKeyRecord): Promise<void>;
  /**
   * Cancels up to `limit` rotated-away keys whose grace has ended, skipping
   * rows another unit of work holds: each due key is cancelled once.
   */
  cancelGraceEnded(tx: Tx, limit: number): Promise<CancelledKey[]>;
}

/** What the data plane authenticates a call against: the key's usable state and its account. */
export interface KeyGrant {
  id: string;
  name: string;
  status: StoredStatus;
  expiresAt: string | null;
  cancelsAt: Date | null;
  modelScope: string[];
  rateLimit: RateLimitJson | null;
  account: AccountView;
}

/** The data plane's lookups of a key (one query each, on the pool). */
export interface KeyGrants {
  grantBySecretHash(hash: string): Promise<KeyGrant | undefined>;
  grantById(id: string): Promise<KeyGrant | undefined>;
}

/** The record field each sort reads. */
export const KEY_SORT_FIELDS = {
  created_at: 'createdAt',
  last_used_at: 'lastUsedAt',
  expires_at: 'expiresAt',
  name: 'name',
  used_tokens: 'usedTokens',
} as const;

const recordOf = (key: ApiKey, accountId: string): ApiKeyRecord => ({
  id: key.id,
  accountId,
  name: key.name,
  dimension: key.dimension,
  status: key.status,
  modelScope: key.modelScope,
  expiresAt: key.expiresAt ?? null,
  rateLimit: key.rateLimit ?? null,
  secretHash: key.secretHash,
  secretHint: key.secretHint,
  usedTokens: key.usedTokens,
  lastUsedAt: key.lastUsedAt ?? null,
  createdAt: key.createdAt,
  cancelledAt: key.cancelledAt ?? null,
  rotatedFrom: key.rotatedFrom ?? null,
  rotatedTo: key.rotatedTo ?? null,
  cancelsAt: key.cancelsAt ?? null,
});

interface GrantRow {
  id: string;
  name: string;
  status: StoredStatus;
  expires_at: string | null;
  cancels_at: Date | null;
  model_scope: string[];
  rate_limit: RateLimitJson | null;
  account_id: string;
  account_name: string;
  timezone: string;
  currency: string;
  credit_limit_micros: number | null;
  credit_overflow: string;
  account_created_at: Date;
}

const GRANT_SELECT = `select k.id, k.name, k.status, to_char(k.expires_at, 'YYYY-MM-DD') as expires_at, k.cancels_at, k.model_scope, k.rate_limit, k.account_id,
       a.name as account_name, a.timezone, a.currency, a.credit_limit_micros, a.credit_overflow, a.created_at as account_created_at
       from api_keys k join accounts a on a.id = k.account_id`;
const GRANT_BY_HASH = `${GRANT_SELECT} where k.secret_hash = $1`;
const GRANT_BY_ID = `${GRANT_SELECT} where k.id = $1`;

const grantOf = (row: GrantRow): KeyGrant => ({
  id: row.id,
  name: row.name,
  status: row.status,
  expiresAt: row.expires_at,
  cancelsAt: row.cancels_at,
  modelScope: row.model_scope,
  rateLimit: row.rate_limit,
  account: accountView({
    id: row.account_id,
    name: row.account_name,
    timezone: row.timezone,
    currency: row.currency,
    creditLimitMicros: row.credit_limit_micros,
    creditOverflow: row.credit_overflow,
    createdAt: row.account_created_at,
  }),
});

export class PgApiKeyRepository implements ApiKeyRepository, KeyGrants {
  constructor(
    private readonly orm: MikroORM,
    /** The data plane's pool: its lookups skip the ORM. */
    private readonly pool: pg.Pool,
  ) {}

  async page(query: KeyPageQuery): Promise<{ total: number; items: ApiKeyRecord[] }> {
    const { today, now } = query;
    const notExpired = { $or: [{ expiresAt: null }, { expiresAt: { $gte: today } }] };
    // A rotated-away key whose grace has ended reads cancelled before the sweep writes it.
    const graceRunning = { $or: [{ cancelsAt: null }, { cancelsAt: { $gt: now } }] };
    // Derived states are filtered with the same rule effectiveStatus applies.
    const byStatus: Record<KeyStatus, object | null> = {
      cancelled: { $or: [{ status: 'cancelled' }, { cancelsAt: { $lte: now } }] },
      expired: { status: 'active', expiresAt: { $lt: today }, ...graceRunning },
      active: query.overLimit ? null : { $and: [{ status: 'active', ...notExpired }, graceRunning] },
      suspended: query.overLimit
        ? { $and: [{ $or: [{ status: 'suspended' }, { status: 'active', ...notExpired }] }, graceRunning] }
        : { status: 'suspended', ...graceRunning },
    };
    const statusWhere = query.status ? byStatus[query.status] : {};
    if (statusWhere === null) return { total: 0, items: [] };
    const where = {
      $and: [
        { account: query.accountId },
        statusWhere,
        query.dimension ? { dimension: query.dimension } : {},
        query.q ? { name: { $ilike: `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` } } : {},
      ],
    };
    const field = KEY_SORT_FIELDS[query.sort];
    const direction = query.order === 'asc' ? 'asc nulls last' : 'desc nulls last';
    const [rows, total] = await this.orm.em.fork().findAndCount(ApiKeySchema, where, {
      orderBy: [{ [field]: direction }, { id: query.order }],
      limit: query.limit,
      offset: query.offset,
    });
    return { total, items: rows.map((k) => recordOf(k, query.accountId)) };
  }

  async find(accountId: string, id: string): Promise<ApiKeyRecord | null> {
    const key = await this.orm.em.fork().findOne(ApiKeySchema, { id, account: accountId });
    return key && recordOf(key, accountId);
  }

  async lock(tx: Tx, accountId: string, id: string): Promise<ApiKeyRecord | null> {
    const key = await emOf(tx).findOne(ApiKeySchema, { id, account: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    return key && recordOf(key, accountId);
  }

  async nameInUse(tx: Tx, accountId: string, name: string, exceptId: string | null): Promise<boolean> {
    const clash = await emOf(tx).findOne(ApiKeySchema, {
      account: accountId,
      name,
      status: { $ne: 'cancelled' },
      ...(exceptId ? { id: { $ne: exceptId } } : {}),
    });
    return clash !== null;
  }

  async insert(tx: Tx, key: ApiKeyRecord): Promise<KeyWrite> {
    const em = emOf(tx);
    em.create(ApiKeySchema, this.row(key));
    // A live-name clash (the partial unique index) is a result, not a driver error.
    return (await flushUnlessTaken(em)) ? 'written' : 'name_taken';
  }

  async update(tx: Tx, id: string, changes: ApiKeyChanges): Promise<KeyWrite> {
    const em = emOf(tx);
    // The row `lock` read in this unit of work: from its identity map, no second read.
    const key = await em.findOneOrFail(ApiKeySchema, { id });
    if (changes.name !== undefined) key.name = changes.name;
    if (changes.dimension !== undefined) key.dimension = changes.dimension;
    if (changes.modelScope !== undefined) key.modelScope = changes.modelScope;
    if (changes.expiresAt !== undefined) key.expiresAt = changes.expiresAt;
    if (changes.rateLimit !== undefined) key.rateLimit = changes.rateLimit;
    if (changes.status !== undefined) key.status = changes.status;
    if (changes.cancelledAt !== undefined) key.cancelledAt = changes.cancelledAt;
    // A live-name clash (the partial unique index) is a result, not a driver error.
    return (await flushUnlessTaken(em)) ? 'written' : 'name_taken';
  }

  async handOver(tx: Tx, oldId: string, old: HandOver, successor: ApiKeyRecord): Promise<void> {
    const em = emOf(tx);
    const key = await em.findOneOrFail(ApiKeySchema, { id: oldId });
    key.rotatedTo = old.rotatedTo;
    key.cancelsAt = old.cancelsAt;
    key.status = old.status;
    // The old key leaves the live-name index before its successor takes the name.
    await em.flush();
    em.create(ApiKeySchema, this.row(successor));
    await em.flush();
  }

  async cancelGraceEnded(tx: Tx, limit: number): Promise<CancelledKey[]> {
    const rows = await emOf(tx).execute<Array<{ id: string; account_id: string; was: StoredStatus }>>(
      `with due as (
         select id, account_id, status from api_keys
         where cancels_at <= now() and status <> 'cancelled'
         order by cancels_at limit ?
         for update skip locked
       )
       update api_keys k set status = 'cancelled', cancelled_at = now(), updated_at = now()
       from due where k.id = due.id
       returning k.id, due.account_id, due.status as was`,
      [limit],
    );
    return rows.map((r) => ({ id: r.id, accountId: r.account_id, was: r.was }));
  }

  async grantBySecretHash(hash: string): Promise<KeyGrant | undefined> {
    const row = (await this.pool.query<GrantRow>(GRANT_BY_HASH, [hash])).rows[0];
    return row && grantOf(row);
  }

  async grantById(id: string): Promise<KeyGrant | undefined> {
    const row = (await this.pool.query<GrantRow>(GRANT_BY_ID, [id])).rows[0];
    return row && grantOf(row);
  }

  private row(key: ApiKeyRecord) {
    const { accountId, ...fields } = key;
    return { ...fields, account: accountId, updatedAt: key.createdAt };
  }
}
