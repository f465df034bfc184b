import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../../db/ids';
import { type AppError, appError, conflict, invalid } from '../../errors';
import { ROLES, type Actor, type Role } from '../actor';
import { DUMMY_HASH_PROMISE, hashPassword, verifyPassword } from './password';
import { LoginThrottle } from './login-throttle';
import type { Transactor } from '../transaction';
import type { ConsoleSessionRepository } from './console-session.repository';
import type { ConsoleUserRecord, ConsoleUserRepository } from './console-user.repository';

export interface SessionGrant {
  token: string;
  expiresAt: Date;
  user: UserView;
}

export interface UserView {
  id: string;
  email: string;
  role: Role;
  accountId: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Console session tokens: opaque, random, stored only as SHA-256. */
const newToken = (): string => `tsxs_${randomBytes(32).toString('base64url')}`;

/** The token of an `Authorization: Bearer …` header, or the 401 `missing_session`. */
function bearerToken(authorization: string | undefined): string {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  if (!token) throw appError('missingSession');
  return token;
}

const invalidSession = (): AppError => appError('invalidSession');

const userView = (user: ConsoleUserRecord): UserView => ({ id: user.id, email: user.email, role: user.role, accountId: user.accountId });

export interface CreateUserInput {
  accountId: string;
  email: string;
  password: string;
  /** owner, admin or viewer. */
  role: string;
}

export class SessionService {
  constructor(
    private readonly transactor: Transactor,
    private readonly users: ConsoleUserRepository,
    private readonly sessions: ConsoleSessionRepository,
    private readonly ttlMs: number,
    private readonly throttle: LoginThrottle = new LoginThrottle(),
  ) {}

  async createUser(input: CreateUserInput): Promise<UserView> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw invalid('email', 'email must be an e-mail address');
    if (input.password.length < 8) throw invalid('password', 'password must be at least 8 characters');
    if (!ROLES.includes(input.role as Role)) throw invalid('role', `role must be one of ${ROLES.join(', ')}`);
    const user: ConsoleUserRecord = {
      id: newId('usr'),
      accountId: input.accountId,
      email,
      passwordHash: await hashPassword(input.password),
      role: input.role as Role,
      createdAt: new Date(),
    };
    await this.transactor.run(async (tx) => {
      if (!(await this.users.insert(tx, user))) throw conflict('email_taken', `a user with e-mail ${email} exists`, 'email');
    });
    return userView(user);
  }

  async countUsers(): Promise<number> {
    return this.users.count();
  }

  async findUser(email: string): Promise<UserView | null> {
    const user = await this.users.findByEmail(email.toLowerCase());
    return user ? userView(user) : null;
  }

  async login(emailInput: string, password: string, ip: string): Promise<SessionGrant> {
    if (emailInput.length === 0) throw invalid('email', 'email is required');
    if (password.length === 0) throw invalid('password', 'password is required');
    const email = emailInput.trim().toLowerCase();
    // Counted now, before the first await: parallel guesses cannot all get past the check.
    const wait = this.throttle.begin(email, ip);
    if (wait > 0) {
      throw appError('loginThrottled', { headers: { 'retry-after': String(Math.ceil(wait / 1000)) } });
    }
    const user = await this.users.findByEmail(email);
    const ok = await verifyPassword(password, user?.passwordHash ?? (await DUMMY_HASH_PROMISE));
    if (!user || !ok) throw appError('invalidCredentials');
    this.throttle.succeed(email, ip);
    const token = newToken();
    const expiresAt = new Date(Date.now() + this.ttlMs);
    await this.transactor.run((tx) =>
      this.sessions.insert(tx, { id: newId('ses'), userId: user.id, tokenHash: hashToken(token), expiresAt, revokedAt: null, createdAt: new Date(), ip }),
    );
    return { token, expiresAt, user: userView(user) };
  }

  /**
   * Makes `token` a session of the user unless it already is one (GATEWAY_BOOTSTRAP_TOKEN,
   * or the first-start token). A session that exists is left as it is: one that was
   * logged out or has expired is not revived, and a live one is not extended, so
   * signing out with a bootstrap token retires it for good. Returns what was found.
   */
  async ensureSession(userId: string, token: string, expiresAt: Date): Promise<'created' | 'live' | 'retired'> {
    const tokenHash = hashToken(token);
    const existing = await this.sessions.findByTokenHash(tokenHash);
    if (existing) return existing.revokedAt !== null || existing.expiresAt.getTime() <= Date.now() ? 'retired' : 'live';
    await this.transactor.run((tx) =>
      this.sessions.insert(tx, { id: newId('ses'), userId, tokenHash, expiresAt, revokedAt: null, createdAt: new Date(), ip: null }),
    );
    return 'created';
  }

  newToken(): string {
    return newToken();
  }

  /** The actor behind a bearer token, or a 401. */
  async authenticate(authorization: string | undefined, ip: string | null): Promise<Actor> {
    const user = await this.sessions.liveUser(hashToken(bearerToken(authorization)), new Date());
    if (!user) throw invalidSession();
    return { accountId: user.accountId, userId: user.id, label: user.email, role: user.role, ip };
  }

  async logout(authorization: string | undefined): Promise<void> {
    const tokenHash = hashToken(bearerToken(authorization));
    const revoked = await this.transactor.run((tx) => this.sessions.revoke(tx, tokenHash, new Date()));
    if (!revoked) throw invalidSession();
  }
}
