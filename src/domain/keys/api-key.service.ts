import { CHANNELS } from '../../db/change-feed';
import type { RateLimitJson } from '../../core/rate-limit';
import type { AuditChanges } from '../audit/audit-event.entity';
import { newId } from '../../db/ids';
import { conflict, notFound } from '../../errors';
import { assertCanMutate, type Actor } from '../actor';
import type { AccountService, AccountView } from '../accounts/account.service';
import type { AuditService } from '../audit/audit.service';
import type { Transactor, Tx } from '../transaction';
import { zoneDate, zoneDateTime } from '../zone-time';
import type { ApiKeyRecord, ApiKeyRepository, KeySort } from './api-key.repository';
import { generateSecret, hashSecret, secretHint } from './key-secret';
import { checkCreateInput, checkUpdateInput, type CreateKeyInput, type Dimension, type KeyFields, type UpdateKeyInput, type ValidationContext } from './key-input';
import { effectiveStatus, type KeyStatus, type SuspendedReason } from './key-status';

export { KEY_SORTS, type KeySort } from './api-key.repository';
export type { CreateKeyInput, UpdateKeyInput } from './key-input';

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

/** What the key service reads of an account: its view, and its defaults for new keys. */
export type KeyAccounts = Pick<AccountService, 'get' | 'keyDefaults'>;

export class ApiKeyService {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly transactor: Transactor,
    private readonly accounts: KeyAccounts,
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
  view(key: ApiKeyRecord, ctx: KeyContext): KeyView {
    const { status, suspendedReason } = effectiveStatus({
      stored: key.status,
      expiresAt: key.expiresAt,
      today: ctx.today,
      overCreditLimit: ctx.overLimit,
      graceEnded: graceEnded(key.cancelsAt, ctx.now),
    });
    return {
      id: key.id,
      name: key.name,
      dimension: key.dimension as Dimension,
      status,
      suspendedReason,
      usedTokens: key.usedTokens,
      modelScope: key.modelScope,
      expiresAt: key.expiresAt,
      rateLimit: key.rateLimit,
      lastUsedAt: key.lastUsedAt ? zoneDateTime(ctx.account.timezone, key.lastUsedAt) : null,
      createdAt: key.createdAt,
      secretHint: key.secretHint,
      rotatedFrom: key.rotatedFrom,
      rotatedTo: key.rotatedTo,
      cancelsAt: key.cancelsAt,
    };
  }

  async list(actor: Actor, query: KeyListQuery): Promise<KeyPage> {
    const ctx = await this.context(actor);
    const { total, items } = await this.keys.page({
      accountId: actor.accountId,
      ...(query.status ? { status: query.status } : {}),
      ...(query.dimension ? { dimension: query.dimension } : {}),
      ...(query.q ? { q: query.q } : {}),
      sort: query.sort,
      order: query.order,
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
      today: ctx.today,
      now: ctx.now,
      overLimit: ctx.overLimit,
    });
    return { total, page: query.page, pageSize: query.pageSize, items: items.map((k) => this.view(k, ctx)) };
  }

  async get(actor: Actor, id: string): Promise<KeyView> {
    const ctx = await this.context(actor);
    const key = await this.keys.find(actor.accountId, id);
    if (!key) throw keyNotFound(id);
    return this.view(key, ctx);
  }

  async create(actor: Actor, input: CreateKeyInput): Promise<CreatedKey> {
    assertCanMutate(actor);
    const ctx = await this.context(actor);
    const fields = checkCreateInput(input, this.validation(ctx.today));
    // A key created without a rate limit named gets the account's default for new keys.
    if (fields.rateLimit === undefined) fields.rateLimit = (await this.accounts.keyDefaults(actor)).rateLimit;
    const secret = generateSecret();
    const key = await this.mutate(async (tx) => {
      await this.assertNameFree(tx, actor.accountId, fields.name, null);
      const now = new Date();
      const created: ApiKeyRecord = {
        id: newId('key'),
        accountId: actor.accountId,
        name: fields.name,
        dimension: fields.dimension,
        status: 'active',
        modelScope: fields.modelScope,
        expiresAt: fields.expiresAt,
        rateLimit: fields.rateLimit ?? null,
        secretHash: hashSecret(secret),
        secretHint: secretHint(secret),
        usedTokens: 0,
        lastUsedAt: null,
        createdAt: now,
        cancelledAt: null,
        rotatedFrom: null,
        rotatedTo: null,
        cancelsAt: null,
      };
      if ((await this.keys.insert(tx, created)) === 'name_taken') throw nameTaken();
      this.audit.record(tx, actor, 'key.create', created.id, changesOf({}, { ...fields }));
      return created;
    });
    return { key: this.view(key, ctx), secret };
  }

  async update(actor: Actor, id: string, input: UpdateKeyInput): Promise<KeyView> {
    assertCanMutate(actor);
    const ctx = await this.context(actor);
    const fields = checkUpdateInput(input, this.validation(ctx.today));
    const key = await this.mutate(async (tx) => {
      const key = await this.lockKey(tx, actor, id);
      if (key.status === 'cancelled') throw conflict('key_cancelled', 'a cancelled key cannot be updated');
      if (fields.name !== undefined && fields.name !== key.name) await this.assertNameFree(tx, actor.accountId, fields.name, key.id);
      const before: Partial<KeyFields> = {
        name: key.name,
        dimension: key.dimension as Dimension,
        modelScope: key.modelScope,
        expiresAt: key.expiresAt,
        rateLimit: key.rateLimit,
      };
      const changes = changesOf(before, fields);
      if ((await this.keys.update(tx, key.id, fields)) === 'name_taken') throw nameTaken();
      if (Object.keys(changes).length > 0) this.audit.record(tx, actor, 'key.update', key.id, changes);
      return { ...key, ...fields };
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
    next: (key: ApiKeyRecord, ctx: KeyContext) => 'active' | 'suspended' | 'cancelled',
  ): Promise<KeyView> {
    assertCanMutate(actor);
    const ctx = await this.context(actor);
    const key = await this.mutate(async (tx) => {
      const key = await this.lockKey(tx, actor, id);
      const to = next(key, ctx);
      if (to === key.status) return key; // idempotent: no write, no audit event
      const set = { status: to, ...(to === 'cancelled' ? { cancelledAt: new Date() } : {}) };
      await this.keys.update(tx, key.id, set);
      const changed = { ...key, ...set };
      // The audit trail shows the states the console showed (an expired key
      // reads `expired`, not its stored `active`), so derive both sides.
      const before = this.view(key, ctx);
      const after = this.view(changed, ctx);
      const changes: AuditChanges = { status: { from: before.status, to: after.status } };
      if (before.suspendedReason !== after.suspendedReason) {
        changes.suspended_reason = { from: before.suspendedReason, to: after.suspendedReason };
      }
      this.audit.record(tx, actor, action, key.id, changes);
      return changed;
    });
    return this.view(key, ctx);
  }

  /** Runs a change as one unit of work with its audit event, then tells every gateway process. */
  private async mutate(work: (tx: Tx) => Promise<ApiKeyRecord>): Promise<ApiKeyRecord> {
    const key = await this.transactor.run(async (tx) => {
      const key = await work(tx);
      await tx.notify(CHANNELS.keys, key.id);
      return key;
    });
    this.onCommitted(key.id);
    return key;
  }

  private async lockKey(tx: Tx, actor: Actor, id: string): Promise<ApiKeyRecord> {
    const key = await this.keys.lock(tx, actor.accountId, id);
    // Another account's key is indistinguishable from a missing one.
    if (!key) throw keyNotFound(id);
    return key;
  }

  private async assertNameFree(tx: Tx, accountId: string, name: string, exceptId: string | null): Promise<void> {
    if (await this.keys.nameInUse(tx, accountId, name, exceptId)) {
      throw conflict('name_taken', `another live key of this account is named "${name}"`, 'name');
    }
  }
}

export const keyNotFound = (id: string) => notFound('key_not_found', `API key ${id} not found`);

/** A concurrent create or rename took the name between the check and the write. */
const nameTaken = () => conflict('name_taken', 'another live key of this account already has that name', 'name');

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
