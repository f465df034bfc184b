// The state a key reads as. Only active/suspended/cancelled are stored;
// `expired` and credit-limit suspension are derived on every read, so no
// background job is needed for them to be right.

export type StoredStatus = 'active' | 'suspended' | 'cancelled';
export type KeyStatus = 'active' | 'suspended' | 'cancelled' | 'expired';
export type SuspendedReason = 'owner' | 'credit_limit';

export interface EffectiveStatus {
  status: KeyStatus;
  suspendedReason: SuspendedReason | null;
}

export interface StatusInputs {
  stored: StoredStatus;
  /** Last valid day, `YYYY-MM-DD`, or null for never. */
  expiresAt: string | null;
  /** Today in the account's zone, `YYYY-MM-DD`. */
  today: string;
  /** The account is at its credit limit: what the limit leaves cannot pay for a minimal useful call (docs/architecture.md §9). */
  overCreditLimit: boolean;
  /**
   * The key was rotated away and its grace has ended (`cancels_at` passed):
   * it reads cancelled at once, before the sweep writes it.
   */
  graceEnded?: boolean;
}

/**
 * Precedence: cancelled (stored, or a rotation grace ended) > owner-suspended > expired > credit-limit > active.
 * An owner suspension is an explicit act and survives expiry; a credit
 * suspension only applies to keys that would otherwise work.
 */
export function effectiveStatus(input: StatusInputs): EffectiveStatus {
  if (input.stored === 'cancelled' || input.graceEnded === true) return { status: 'cancelled', suspendedReason: null };
  if (input.stored === 'suspended') return { status: 'suspended', suspendedReason: 'owner' };
  if (input.expiresAt !== null && input.today > input.expiresAt) return { status: 'expired', suspendedReason: null };
  if (input.overCreditLimit) return { status: 'suspended', suspendedReason: 'credit_limit' };
  return { status: 'active', suspendedReason: null };
}
