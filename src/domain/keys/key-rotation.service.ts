// Key rotation as one action (issue 31): the successor takes over the old
// key's owner fields under a new secret, and the old key either keeps working
// for a grace period (planned) or is suspended at once (emergency, grace 0).
import { CHANNELS } from '../../db/change-feed';
import type { AuditChanges } from '../audit/audit-event.entity';
import { newId } from '../../db/ids';
import { conflict, invalid } from '../../errors';
import { assertCanMutate, type Actor } from '../actor';
import type { AuditService } from '../audit/audit.service';
import type { Transactor, Tx } from '../transaction';
import type { ApiKeyRecord, ApiKeyRepository } from './api-key.repository';
import { graceEnded, keyNotFound, type ApiKeyService, type KeyView } from './api-key.service';
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

/** A rotation's options, as each transport maps them. */
export interface RotateKeyInput {
  /** Hours the old key keeps working (0 = emergency); absent = DEFAULT_GRACE_HOURS. */
  graceHours?: number;
}

/** What `grace_hours` must be: a transport's type check answers with the same words. */
export const GRACE_HOURS_RULE = `grace_hours must be a whole number of hours from 0 (emergency: the old key is suspended at once) to ${MAX_GRACE_HOURS}`;

/** The grace a rotation gets: an integer 0–720, default 24; 0 is the emergency rotation. */
export function graceHoursOf(input: RotateKeyInput): number {
  const value = input.graceHours;
  if (value === undefined) return DEFAULT_GRACE_HOURS;
  if (!Number.isInteger(value) || value < 0 || value > MAX_GRACE_HOURS) throw invalid('grace_hours', GRACE_HOURS_RULE);
  return value;
}

export class KeyRotationService {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly transactor: Transactor,
    private readonly keyViews: ApiKeyService,
    private readonly audit: AuditService,
    /** Called after a rotation commits with the old key's id (the process-local half of NOTIFY). */
    private readonly onCommitted: (keyId: string) => void = () => undefined,
  ) {}

  async rotate(actor: Actor, id: string, input: RotateKeyInput): Promise<RotatedKey> {
    assertCanMutate(actor);
    const graceHours = graceHoursOf(input);
    const ctx = await this.keyViews.context(actor);
    const secret = generateSecret();
    const { old, successor } = await this.transactor.run(async (tx) => {
      const locked = await this.lockRotatable(tx, actor, id);
      const successorId = newId('key');
      const now = new Date();
      const before = this.keyViews.view(locked, { ...ctx, now });
      // Planned: the old key works until its grace ends. Emergency: suspended
      // at once, and left suspended (not cancelled) so a rotation of the wrong
      // key can still be undone by resuming it; it never works on its own again.
      const old: ApiKeyRecord = {
        ...locked,
        rotatedTo: successorId,
        cancelsAt: graceHours > 0 ? new Date(now.getTime() + graceHours * 3600_000) : locked.cancelsAt,
        status: graceHours > 0 ? locked.status : 'suspended',
      };
      // The successor copies every owner field of the old key; the secret,
      // usage and last use belong to each key alone, so usage history stays
      // on the key that made it.
      const successor: ApiKeyRecord = {
        id: successorId,
        accountId: actor.accountId,
        name: old.name,
        dimension: old.dimension,
        modelScope: old.modelScope,
        expiresAt: old.expiresAt,
        // The successor is held to the same rate limit (issue 31); its budgets are its own from its first call.
        rateLimit: old.rateLimit,
        status: 'active',
        secretHash: hashSecret(secret),
        secretHint: secretHint(secret),
        usedTokens: 0,
        lastUsedAt: null,
        createdAt: now,
        cancelledAt: null,
        rotatedFrom: old.id,
        rotatedTo: null,
        cancelsAt: null,
      };
      await this.keys.handOver(tx, old.id, { rotatedTo: old.rotatedTo, cancelsAt: old.cancelsAt, status: old.status }, successor);
      const after = this.keyViews.view(old, { ...ctx, now });
      const changes: AuditChanges = {
        rotated_to: { from: null, to: successorId },
        cancels_at: { from: null, to: old.cancelsAt ? old.cancelsAt.toISOString() : null },
        grace_hours: { from: null, to: graceHours },
      };
      if (before.status !== after.status) changes.status = { from: before.status, to: after.status };
      if (before.suspendedReason !== after.suspendedReason) changes.suspended_reason = { from: before.suspendedReason, to: after.suspendedReason };
      this.audit.record(tx, actor, 'key.rotate', old.id, changes);
      this.audit.record(tx, actor, 'key.create', successorId, {
        name: { from: null, to: successor.name },
        dimension: { from: null, to: successor.dimension },
        model_scope: { from: null, to: successor.modelScope },
        expires_at: { from: null, to: successor.expiresAt },
        rate_limit: { from: null, to: successor.rateLimit },
        rotated_from: { from: null, to: old.id },
      });
      await tx.notify(CHANNELS.keys, old.id);
      return { old, successor };
    });
    this.onCommitted(old.id);
    const now = new Date();
    return { key: this.keyViews.view(successor, { ...ctx, now }), secret, previous: this.keyViews.view(old, { ...ctx, now }) };
  }

  /** The key to rotate, locked; refused when it is cancelled (or its grace has ended) or it already has a successor. */
  private async lockRotatable(tx: Tx, actor: Actor, id: string): Promise<ApiKeyRecord> {
    const key = await this.keys.lock(tx, actor.accountId, id);
    // Another account's key is indistinguishable from a missing one.
    if (!key) throw keyNotFound(id);
    if (key.status === 'cancelled' || graceEnded(key.cancelsAt, new Date())) {
      throw conflict('key_cancelled', 'a cancelled key cannot be rotated');
    }
    if (key.rotatedTo) {
      throw conflict('key_rotated', `the key was already rotated to ${key.rotatedTo}; rotate that key instead`);
    }
    return key;
  }
}
