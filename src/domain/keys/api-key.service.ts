import { txOf } from '../pg-transactor';
import { LockMode, UniqueConstraintViolationException, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import { CHANNELS, notifyChange } from '../../db/change-feed';
import { ApiKeySchema, type ApiKey } from '../../db/entities/api-key.entity';
import { AccountSchema } from '../accounts/account.entity';
import type { RateLimitJson } from '../../core/rate-limit';
import type { AuditChanges } from '../audit/audit-event.entity';
import { newId } from '../../db/ids';
import { conflict, notFound } from '../../errors';
import { assertCanMutate, type Actor } from '../actor';
import type { AccountService, AccountView } from '../accounts/account.service';
import type { AuditService } from '../audit/audit.service';
import { zoneDate, zoneDateTime } from '../zone-time';
import { generateSecret, hashSecret, secretHint } from './key-secret';
import { parseCreateInput, parseUpdateInput, type Dimension, type KeyFields, type ValidationContext } from './key-input';
import { effectiveStatus, type KeyStatus, type SuspendedReason } from './key-status';
import { inTransaction } from '../../db/transaction';

export interface KeyView {
  id: string;
  name: string;
  dimension: Dimension;
  status: KeyStatus;
  suspendedReason: SuspendedReason | null;
  usedTokens: number;
  modelScope: string[];
  expiresAt: string | null;
  rateLimit: RateLimitJson | null;
  /** `YYYY-MM-DD HH:MM:SS` in the account zone. */
  lastUsedAt: string | null;
  createdAt: Date;
  secretHint: string;
  /** The key this one replaced by rotation, and the one that replaced it. */
  rotatedFrom: string | null;
  rotatedTo: string | null;
  /** When a rotated-away key's grace ends (it is cancelled from then on); null otherwise. */
  cancelsAt: Date | null;
}

export interface CreatedKey {
  key: KeyView;
  /** The full secret: returned by create, once, and never again. */
  secret: string;
}

export const KEY_SORTS = ['created_at', 'last_used_at', 'expires_at', 'name', 'used_tokens'] as const;
export type KeySort = (typeof KEY_SORTS)[number];
export const KEY_STATUSES: readonly KeyStatus[] = ['active', 'suspended', 'cancelled', 'expired'];

export interface KeyListQuery {
  page: number;
  pageSize: number;
  status?: KeyStatus;
  dimension?: Dimension;
  q?: string;
  sort: KeySort;
  order: 'asc' | 'desc';
}

export interface KeyPage {
  total: number;
  page: number;
  pageSize: number;
  items: KeyView[];
}

/**
 * Whether an account is at its credit limit: what the limit leaves cannot
 * pay for a minimal useful call (metering owns the ledger and the threshold).
 */
export interface CreditGate {
  isOverLimit(account: AccountView): Promise<boolean>;
}

/** The neutral model names a key may be scoped to (the catalog). */
export interface ModelDirectory {
  has(name: string): boolean;
  names(): string[];
}

/** What reading a key's state needs: the account (zone), today there, now (rotation graces), and its credit state. */
export interface KeyContext {
  account: AccountView;
  today: string;
  now: Date;
  overLimit: boolean;
}

/** Whether a rotated-away key's grace has ended at `now`. */
export const graceEnded = (cancelsAt: Date | null, now: Date): boolean => cancelsAt !== null && cancelsAt.getTime() <= now.getTime();

const SORT_FIELD = {
  created_at: 'createdAt',
  last_used_at: 'lastUsedAt',
  expires_at: 'expiresAt',
  name: 'name',
  used_tokens: 'usedTokens',
} as const;

export class ApiKeyService {
  constructor(
    private readonly orm: MikroORM,
    private readonly accounts: AccountService,
    private readonly audit: AuditService,
    private readonly models: ModelDirectory,
    private readonly credit: CreditGate,
    /** Called after a key change commits (the process-local half of NOTIFY). */
    private readonly onCommitted: (keyId: string) => void = () => undefined,
  ) {}

  /** What the actor's keys read against now (the rotation service reads its keys the same way). */
  async context(actor: Actor): Promise<KeyContext> {
    const account = await this.accounts.get(actor.accountId);
    return { account, today: zoneDate(account.timezone), now: new Date(), overLimit: await this.credit.isOverLimit(account) };
  }

  private validation(today: string): ValidationContext {
    return { today, isKnownModel: (n) => this.models.has(n), knownModels: () => this.models.names() };
  }

  /** A key as every transport shows it: derived state, account-zone times, rotation links. */
  view(key: ApiKey, ctx: KeyContext): KeyView {
    const { status, suspendedReason } = effectiveStatus({
      stored: key.status,
      expiresAt: key.expiresAt ?? null,
      today: ctx.today,
      overCreditLimit: ctx.overLimit,
      graceEnded: graceEnded(key.cancelsAt ?? null, ctx.now),
    });
    return {
      id: key.id,
      name: key.name,
      dimension: key.dimension as Dimension,
      status,
      suspendedReason,
      usedTokens: key.usedTokens,
      modelScope: key.modelScope,
      expiresAt: key.expiresAt ?? null,
      rateLimit: key.rateLimit ?? null,
      lastUsedAt: key.lastUsedAt ? zoneDateTime(ctx.account.timezone, key.lastUsedAt) : null,
      createdAt: key.createdAt,
      secretHint: key.secretHint,
      rotatedFrom: key.rotatedFrom ?? null,
      rotatedTo: key.rotatedTo ?? null,
      cancelsAt: key.cancelsAt ?? null,
    };
  }

  async list(actor: Actor, query: KeyListQuery): Promise<KeyPage> {
    const ctx = await this.context(actor);
    const em = this.orm.em.fork();
    const notExpired = { $or: [{ expiresAt: null }, { expiresAt: { $gte: ctx.today } }] };
    // A rotated-away key whose grace has ended reads cancelled before the sweep writes it.
    const graceRunning = { $or: [{ cancelsAt: null }, { cancelsAt: { $gt: ctx.now } }] };
    // Derived states are filtered with the same rule effectiveStatus applies.
    const byStatus: Record<KeyStatus, object | null> = {
      cancelled: { $or: [{ status: 'cancelled' }, { cancelsAt: { $lte: ctx.now } }] },
      expired: { status: 'active', expiresAt: { $lt: ctx.today }, ...graceRunning },
      active: ctx.overLimit ? null : { $and: [{ status: 'active', ...notExpired }, graceRunning] },
      suspended: ctx.overLimit
        ? { $and: [{ $or: [{ status: 'suspended' }, { status: 'active', ...notExpired }] }, graceRunning] }
        : { status: 'suspended', ...graceRunning },
    };
    const statusWhere = query.status ? byStatus[query.status] : {};
    if (statusWhere === null) return { total: 0, page: query.page, pageSize: query.pageSize, items: [] };
    const where = {
      $and: [
        { account: actor.accountId },
        statusWhere,
        query.dimension ? { dimension: query.dimension } : {},
        query.q ? { name: { $ilike: `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` } } : {},
      ],
    };
    const field = SORT_FIELD[query.sort];
    const direction = query.order === 'asc' ? 'asc nulls last' : 'desc nulls last';
    const [rows, total] = await em.findAndCount(ApiKeySchema, where, {
      orderBy: [{ [field]: direction }, { id: query.order }],
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return { total, page: query.page, pageSize: query.pageSize, items: rows.map((k) => this.view(k, ctx)) };
  }

  async get(actor: Actor, id: string): Promise<KeyView> {
    const ctx = await this.context(actor);
    const key = await this.orm.em.fork().findOne(ApiKeySchema, { id, account: actor.accountId });
    if (!key) throw keyNotFound(id);
    return this.view(key, ctx);
  }

  async create(actor: Actor, body: unknown): Promise<CreatedKey> {
    assertCanMutate(actor);
    const ctx = await this.context(actor);
    const fields = parseCreateInput(body, this.validation(ctx.today));
    const secret = generateSecret();
    const key = await this.mutate(actor, async (em) => {
      await this.assertNameFree(em, actor.accountId, fields.name, null);
      // A key created without a rate limit named gets the account's default for new keys.
      if (fields.rateLimit === undefined) fields.rateLimit = (await em.findOne(AccountSchema, { id: actor.accountId }))?.keyRateLimit ?? null;
      const created = em.create(ApiKeySchema, {
        id: newId('key'),
        account: actor.accountId,
        name: fields.name,
        dimension: fields.dimension,
        status: 'active',
        modelScope: fields.modelScope,
        expiresAt: fields.expiresAt,
        rateLimit: fields.rateLimit,
        secretHash: hashSecret(secret),
        secretHint: secretHint(secret),
        usedTokens: 0,
        lastUsedAt: null,
        createdAt: new Date(),
        updatedAt: new Date(),
        cancelledAt: null,
      });
      this.audit.record(txOf(em), actor, 'key.create', created.id, changesOf({}, { ...fields }));
      return created;
    });
    return { key: this.view(key, ctx), secret };
  }

  async update(actor: Actor, id: string, body: unknown): Promise<KeyView> {
    assertCanMutate(actor);
    const ctx = await this.context(actor);
    const fields = parseUpdateInput(body, this.validation(ctx.today));
    const key = await this.mutate(actor, async (em) => {
      const key = await this.lockKey(em, actor, id);
      if (key.status === 'cancelled') throw conflict('key_cancelled', 'a cancelled key cannot be updated');
      if (fields.name !== undefined && fields.name !== key.name) await this.assertNameFree(em, actor.accountId, fields.name, key.id);
      const before: Partial<KeyFields> = {
        name: key.name,
        dimension: key.dimension as Dimension,
        modelScope: key.modelScope,
        expiresAt: key.expiresAt ?? null,
        rateLimit: key.rateLimit ?? null,
      };
      const changes = changesOf(before, fields);
      if (fields.name !== undefined) key.name = fields.name;
      if (fields.dimension !== undefined) key.dimension = fields.dimension;
      if (fields.modelScope !== undefined) key.modelScope = fields.modelScope;
      if (fields.expiresAt !== undefined) key.expiresAt = fields.expiresAt;
      if (fields.rateLimit !== undefined) key.rateLimit = fields.rateLimit;
      if (Object.keys(changes).length > 0) this.audit.record(txOf(em), actor, 'key.update', key.id, changes);
      return key;
    });
    return this.view(key, ctx);
  }

  async suspend(actor: Actor, id: string): Promise<KeyView> {
    return this.transition(actor, id, 'key.suspend', (key) => {
      if (key.status === 'cancelled') throw conflict('key_cancelled', 'a cancelled key cannot be suspended');
      return 'suspended';
    });
  }

  async resume(actor: Actor, id: string): Promise<KeyView> {
    return this.transition(actor, id, 'key.resume', (key, ctx) => {
      if (key.status === 'cancelled') throw conflict('key_cancelled', 'a cancelled key cannot be resumed');
      if (key.status === 'active' && ctx.overLimit) {
        throw conflict('credit_limit_reached', 'the key is suspended by the account credit limit; the operator must raise the limit');
      }
      // An expired key resumes into `expired`: expiry is derived from expires_at.
      return 'active';
    });
  }

  async cancel(actor: Actor, id: string): Promise<KeyView> {
    return this.transition(actor, id, 'key.cancel', () => 'cancelled');
  }

  private async transition(
    actor: Actor,
    id: string,
    action: string,
    next: (key: ApiKey, ctx: KeyContext) => 'active' | 'suspended' | 'cancelled',
  ): Promise<KeyView> {
    assertCanMutate(actor);
    const ctx = await this.context(actor);
    const key = await this.mutate(actor, async (em) => {
      const key = await this.lockKey(em, actor, id);
      const to = next(key, ctx);
      if (to === key.status) return key; // idempotent: no write, no audit event
      // The audit trail shows the states the console showed (an expired key
      // reads `expired`, not its stored `active`), so derive both sides.
      const before = this.view(key, ctx);
      key.status = to;
      if (to === 'cancelled') key.cancelledAt = new Date();
      const after = this.view(key, ctx);
      const changes: AuditChanges = { status: { from: before.status, to: after.status } };
      if (before.suspendedReason !== after.suspendedReason) {
        changes.suspended_reason = { from: before.suspendedReason, to: after.suspendedReason };
      }
      this.audit.record(txOf(em), actor, action, key.id, changes);
      return key;
    });
    return this.view(key, ctx);
  }

  /** Runs a change in one transaction with its audit event, then tells every gateway process. */
  private async mutate(actor: Actor, work: (em: EntityManager) => Promise<ApiKey>): Promise<ApiKey> {
    try {
      const key = await inTransaction(this.orm, async (em) => {
        const key = await work(em);
        await em.flush();
        await notifyChange(em, CHANNELS.keys, key.id);
        return key;
      });
      this.onCommitted(key.id);
      return key;
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) {
        throw conflict('name_taken', 'another live key of this account already has that name', 'name');
      }
      throw error;
    }
  }

  private async lockKey(em: EntityManager, actor: Actor, id: string): Promise<ApiKey> {
    const key = await em.findOne(ApiKeySchema, { id, account: actor.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    // Another account's key is indistinguishable from a missing one.
    if (!key) throw keyNotFound(id);
    return key;
  }

  private async assertNameFree(em: EntityManager, accountId: string, name: string, exceptId: string | null): Promise<void> {
    const clash = await em.findOne(ApiKeySchema, {
      account: accountId,
      name,
      status: { $ne: 'cancelled' },
      ...(exceptId ? { id: { $ne: exceptId } } : {}),
    });
    if (clash) throw conflict('name_taken', `another live key of this account is named "${name}"`, 'name');
  }
}

const keyNotFound = (id: string) => notFound('key_not_found', `API key ${id} not found`);

const WIRE_NAMES: Record<keyof KeyFields, string> = {
  name: 'name',
  dimension: 'dimension',
  modelScope: 'model_scope',
  expiresAt: 'expires_at',
  rateLimit: 'rate_limit',
};

function changesOf(before: Partial<KeyFields>, after: Partial<KeyFields>): AuditChanges {
  const out: AuditChanges = {};
  for (const field of Object.keys(after) as Array<keyof KeyFields>) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) out[WIRE_NAMES[field]] = { from, to };
  }
  return out;
}
