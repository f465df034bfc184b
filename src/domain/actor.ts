import { appError } from '../errors';

export type Role = 'owner' | 'admin' | 'viewer';
export const ROLES: readonly Role[] = ['owner', 'admin', 'viewer'];

/** Who is acting, on which account, from where. Every control-plane call carries one. */
export interface Actor {
  accountId: string;
  /** Console user id; null for the operator CLI. */
  userId: string | null;
  /** E-mail of the console user, or `operator-cli`. */
  label: string;
  role: Role;
  ip: string | null;
}

/** Viewers read; only owners and admins change anything. */
export function assertCanMutate(actor: Actor): void {
  if (actor.role === 'viewer') {
    throw appError('readOnlyRole');
  }
}
