// Key rotation as one action (issue 31): the successor takes over the old
// key's owner fields under a new secret, and the old key either keeps working
// for a grace period (planned) or is suspended at once (emergency, grace 0).
import { txOf } from '../pg-transactor';
import { LockMode, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import { CHANNELS, notifyChange } from '../../db/change-feed';
import { ApiKeySchema, type ApiKey } from '../../db/entities/api-key.entity';
import type { AuditChanges } from '../audit/audit-event.entity';
import { newId } from '../../db/ids';
import { inTransaction } from '../../db/transaction';
import { conflict, invalid, notFound } from '../../errors';
import { assertCanMutate, type Actor } from '../actor';
import type { AuditService } from '../audit/audit.service';
import { graceEnded, type ApiKeyService, type KeyView } from './api-key.service';
import { generateSecret, hashSecret, secretHint } from './key-secret';

/** The grace a planned rotation gets when the caller names none. */
export const DEFAULT_GRACE_HOURS = 24;
/** The longest grace: a rotation is a hand-over, not a second key for good. */
export const MAX_GRACE_HOURS = 720;

export interface RotatedKey {
  /** The successor, linked by `rotatedFrom`. */
  key: KeyView;
  /** The full secret of the successor: returned once, never again. */
  secret: string;
  /** The old key as it now reads: `rotatedTo`, and `cancelsAt` unless the rotation was an emergency. */
  previous: KeyView;
}

/** `{grace_hours}`: an integer 0–720, default 24; 0 is the emergency rotation. */
export function parseRotateInput(body: unknown): { graceHours: number } {
  if (body === undefined || body === null) return { graceHours: DEFAULT_GRACE_HOURS };
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('body', 'the request body must be a JSON object');
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== 'grace_hours') throw invalid(key, `unknown field "${key}"; allowed: grace_hours`, 'unknown_field');
  }
  const value = record.grace_hours;
  if (value === undefined || value === null) return { graceHours: DEFAULT_GRACE_HOURS };
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_GRACE_HOURS) {
    throw invalid('grace_hours', `grace_hours must be a whole number of hours from 0 (emergency: the old key is suspended at once) to ${MAX_GRACE_HOURS}`);
  }
  return { graceHours: value };
}

export class KeyRotationService {
  constructor(
    private readonly orm: MikroORM,
    private readonly keys: ApiKeyService,
    private readonly audit: AuditService,
    /** Called after a rotation commits with the old key's id (the process-local half of NOTIFY). */
    private readonly onCommitted: (keyId: string) => void = () => undefined,
  ) {}

  async rotate(actor: Actor, id: string, body: unknown): Promise<RotatedKey> {
    assertCanMutate(actor);
    const { graceHours } = parseRotateInput(body);
    const ctx = await this.keys.context(actor);
    const secret = generateSecret();
    const { old, successor } = await inTransaction(this.orm, async (em) => {
      const old = await this.lockRotatable(em, actor, id);
      const successorId = newId('key');
      const now = new Date();
      const before = this.keys.view(old, { ...ctx, now });
      old.rotatedTo = successorId;
      // Planned: the old key works until its grace ends. Emergency: suspended
      // at once, and left suspended (not cancelled) so a rotation of the wrong
      // key can still be undone by resuming it; it never works on its own again.
      if (graceHours > 0) old.cancelsAt = new Date(now.getTime() + graceHours * 3600_000);
      else old.status = 'suspended';
      // The old key leaves the live-name index before its successor takes the name.
      await em.flush();
      // The successor copies every owner field of the old key; the secret,
      // usage and last use belong to each key alone, so usage history stays
      // on the key that made it.
      const successor = em.create(ApiKeySchema, {
        id: successorId,
        account: actor.accountId,
        name: old.name,
        dimension: old.dimension,
        modelScope: old.modelScope,
        expiresAt: old.expiresAt ?? null,
        // The successor is held to the same rate limit (issue 31); its budgets are its own from its first call.
        rateLimit: old.rateLimit ?? null,
        status: 'active',
        secretHash: hashSecret(secret),
        secretHint: secretHint(secret),
        usedTokens: 0,
        lastUsedAt: null,
        createdAt: now,
        updatedAt: now,
        cancelledAt: null,
        rotatedFrom: old.id,
        rotatedTo: null,
        cancelsAt: null,
      });
      const after = this.keys.view(old, { ...ctx, now });
      const changes: AuditChanges = {
        rotated_to: { from: null, to: successorId },
        cancels_at: { from: null, to: old.cancelsAt ? old.cancelsAt.toISOString() : null },
        grace_hours: { from: null, to: graceHours },
      };
      if (before.status !== after.status) changes.status = { from: before.status, to: after.status };
      if (before.suspendedReason !== after.suspendedReason) changes.suspended_reason = { from: before.suspendedReason, to: after.suspendedReason };
      this.audit.record(txOf(em), actor, 'key.rotate', old.id, changes);
      this.audit.record(txOf(em), actor, 'key.create', successorId, {
        name: { from: null, to: successor.name },
        dimension: { from: null, to: successor.dimension },
        model_scope: { from: null, to: successor.modelScope },
        expires_at: { from: null, to: successor.expiresAt ?? null },
        rate_limit: { from: null, to: successor.rateLimit ?? null },
        rotated_from: { from: null, to: old.id },
      });
      await em.flush();
      await notifyChange(em, CHANNELS.keys, old.id);
      return { old, successor };
    });
    this.onCommitted(old.id);
    const now = new Date();
    return { key: this.keys.view(successor, { ...ctx, now }), secret, previous: this.keys.view(old, { ...ctx, now }) };
  }

  /** The key to rotate, locked; refused when it is cancelled (or its grace has ended) or it already has a successor. */
  private async lockRotatable(em: EntityManager, actor: Actor, id: string): Promise<ApiKey> {
    const key = await em.findOne(ApiKeySchema, { id, account: actor.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    // Another account's key is indistinguishable from a missing one.
    if (!key) throw notFound('key_not_found', `API key ${id} not found`);
    if (key.status === 'cancelled' || graceEnded(key.cancelsAt ?? null, new Date())) {
      throw conflict('key_cancelled', 'a cancelled key cannot be rotated');
    }
    if (key.rotatedTo) {
      throw conflict('key_rotated', `the key was already rotated to ${key.rotatedTo}; rotate that key instead`);
    }
    return key;
  }
}
