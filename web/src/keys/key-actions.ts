// Which row actions apply to a key in a given state (docs/architecture.md §14 transitions).
import type { KeyRowFragment } from '../gql/graphql';

export type RowAction = 'edit' | 'suspend' | 'resume' | 'rotate' | 'cancel' | 'usage';

export function allowedActions(key: Pick<KeyRowFragment, 'status' | 'suspendedReason' | 'rotatedTo'>, canMutate: boolean): ReadonlySet<RowAction> {
  const allowed = new Set<RowAction>(['usage']);
  if (!canMutate) return allowed;
  switch (key.status) {
    case 'active':
      allowed.add('edit').add('suspend').add('cancel');
      break;
    case 'suspended':
      allowed.add('edit').add('cancel');
      // A credit-limit suspension is lifted by the operator, not by resume;
      // suspending it as the owner keeps it suspended after the credit returns.
      allowed.add(key.suspendedReason === 'credit_limit' ? 'suspend' : 'resume');
      break;
    case 'expired':
      // Editing the expiry to a future date revives the key.
      allowed.add('edit').add('cancel');
      break;
    default:
      break;
  }
  // A live key rotates once; after that its successor is the one to rotate.
  if (key.status !== 'cancelled' && !key.rotatedTo) allowed.add('rotate');
  return allowed;
}
