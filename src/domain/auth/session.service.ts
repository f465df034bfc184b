import { createHash, randomBytes } from 'node:crypto';
import { UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import { ConsoleSessionSchema } from './console-session.entity';
import { ConsoleUserSchema, type ConsoleUser } from './console-user.entity';
import { newId } from '../../db/ids';
import { type AppError, appError, conflict, invalid } from '../../errors';
import { ROLES, type Actor, type Role } from '../actor';
import { DUMMY_HASH_PROMISE, hashPassword, verifyPassword } from './password';
import { LoginThrottle } from './login-throttle';

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

const userView = (user: ConsoleUser): UserView => ({ id: user.id, email: user.email, role: user.role, accountId: user.account.id });

export class SessionService {
  constructor(
    private readonly orm: MikroORM,
    private readonly ttlMs: number,
    private readonly throttle: LoginThrottle = new LoginThrottle(),
  ) {}

  async createUser(input: { accountId: string; email: string; password: string; role: string }): Promise<UserView> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw invalid('email', 'email must be an e-mail address');
    if (input.password.length < 8) throw invalid('password', 'password must be at least 8 characters');
    if (!ROLES.includes(input.role as Role)) throw invalid('role', `role must be one of ${ROLES.join(', ')}`);
    const em = this.orm.em.fork();
    const user = em.create(ConsoleUserSchema, {
      id: newId('usr'),
      account: input.accountId,
      email,
      passwordHash: await hashPassword(input.password),
      role: input.role as Role,
      createdAt: new Date(),
    });
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw conflict('email_taken', `a user with e-mail ${email} exists`, 'email');
      throw error;
    }
    return { id: user.id, email, role: user.role, accountId: input.accountId };
  }

  async countUsers(): Promise<number> {
    return this.orm.em.fork().count(ConsoleUserSchema, {});
  }

  async findUser(email: string): Promise<UserView | null> {
    const user = await this.orm.em.fork().findOne(ConsoleUserSchema, { email: email.toLowerCase() });
    return user ? userView(user) : null;
  }

  async login(emailInput: unknown, password: unknown, ip: string): Promise<SessionGrant> {
    if (typeof emailInput !== 'string' || emailInput.length === 0) throw invalid('email', 'email is required');
    if (typeof password !== 'string' || password.length === 0) throw invalid('password', 'password is required');
    const email = emailInput.trim().toLowerCase();
    // Counted now, before the first await: parallel guesses cannot all get past the check.
    const wait = this.throttle.begin(email, ip);
    if (wait > 0) {
      throw appError('loginThrottled', { headers: { 'retry-after': String(Math.ceil(wait / 1000)) } });
    }
    const em = this.orm.em.fork();
    const user = await em.findOne(ConsoleUserSchema, { email });
    const ok = await verifyPassword(password, user?.passwordHash ?? (await DUMMY_HASH_PROMISE));
    if (!user || !ok) throw appError('invalidCredentials');
    this.throttle.succeed(email, ip);
    const token = newToken();
    const expiresAt = new Date(Date.now() + this.ttlMs);
    em.create(ConsoleSessionSchema, {
      id: newId('ses'),
      user,
      tokenHash: hashToken(token),
      expiresAt,
      revokedAt: null,
      createdAt: new Date(),
      ip,
    });
    await em.flush();
    return { token, expiresAt, user: userView(user) };
  }

  /** Ensures a session exists for a known token (GATEWAY_BOOTSTRAP_TOKEN, or the first-start token). */
  /**
   * Makes `token` a session of the user unless it already is one. A session
   * that exists is left as it is: one that was logged out or has expired is
   * not revived, and a live one is not extended, so signing out with a
   * bootstrap token retires it for good. Returns what was found.
   */
  async ensureSession(userId: string, token: string, expiresAt: Date): Promise<'created' | 'live' | 'retired'> {
    const em = this.orm.em.fork();
    const tokenHash = hashToken(token);
    const existing = await em.findOne(ConsoleSessionSchema, { tokenHash });
    if (existing) return existing.revokedAt !== null || existing.expiresAt.getTime() <= Date.now() ? 'retired' : 'live';
    em.create(ConsoleSessionSchema, {
      id: newId('ses'),
      user: userId,
      tokenHash,
      expiresAt,
      revokedAt: null,
      createdAt: new Date(),
      ip: null,
    });
    await em.flush();
    return 'created';
  }

  newToken(): string {
    return newToken();
  }

  /** The actor behind a bearer token, or a 401. */
  async authenticate(authorization: string | undefined, ip: string | null): Promise<Actor> {
    const tokenHash = hashToken(bearerToken(authorization));
    const em = this.orm.em.fork();
    const session = await em.findOne(ConsoleSessionSchema, { tokenHash, revokedAt: null, expiresAt: { $gt: new Date() } }, { populate: ['user'] });
    if (!session) throw invalidSession();
    const user = session.user;
    return { accountId: user.account.id, userId: user.id, label: user.email, role: user.role, ip };
  }

  async logout(authorization: string | undefined): Promise<void> {
    const tokenHash = hashToken(bearerToken(authorization));
    const em = this.orm.em.fork();
    const session = await em.findOne(ConsoleSessionSchema, { tokenHash, revokedAt: null });
    if (!session) throw invalidSession();
    session.revokedAt = new Date();
    await em.flush();
  }
}
