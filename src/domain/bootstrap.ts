import { randomBytes } from 'node:crypto';
import type { AccountService } from './accounts/account.service';
import type { SessionService } from './auth/session.service';

export const DEFAULT_ACCOUNT = 'default';
export const DEFAULT_OWNER_EMAIL = 'owner@gateway.local';
const BOOTSTRAP_TTL_MS = 365 * 24 * 3600_000;

export interface FirstStartCredentials {
  email: string;
  password: string;
  token: string;
  expiresAt: Date;
}

/**
 * Makes a fresh installation usable: the `default` account always exists;
 * GATEWAY_BOOTSTRAP_TOKEN becomes a valid owner session of it; and on a first
 * start with no console users at all, an owner and one session token are
 * created and returned so they can be shown once.
 */
export async function bootstrap(
  accounts: AccountService,
  sessions: SessionService,
  bootstrapToken: string | undefined,
  /** Called when GATEWAY_BOOTSTRAP_TOKEN names a session that was signed out or expired (main logs it). */
  onRetired?: () => void,
): Promise<FirstStartCredentials | null> {
  const account = (await accounts.findByName(DEFAULT_ACCOUNT)) ?? (await accounts.create({ name: DEFAULT_ACCOUNT }));
  const expiresAt = new Date(Date.now() + BOOTSTRAP_TTL_MS);
  if (bootstrapToken) {
    const owner =
      (await sessions.findUser(DEFAULT_OWNER_EMAIL)) ??
      (await sessions.createUser({ accountId: account.id, email: DEFAULT_OWNER_EMAIL, password: randomBytes(18).toString('base64url'), role: 'owner' }));
    // A bootstrap session that was signed out (or ran out) stays retired: restarting does not bring it back.
    if ((await sessions.ensureSession(owner.id, bootstrapToken, expiresAt)) === 'retired') onRetired?.();
    return null;
  }
  if ((await sessions.countUsers()) > 0) return null;
  const password = randomBytes(12).toString('base64url');
  const owner = await sessions.createUser({ accountId: account.id, email: DEFAULT_OWNER_EMAIL, password, role: 'owner' });
  const token = sessions.newToken();
  await sessions.ensureSession(owner.id, token, expiresAt);
  return { email: DEFAULT_OWNER_EMAIL, password, token, expiresAt };
}
