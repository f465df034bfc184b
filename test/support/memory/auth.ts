import type { ConsoleSessionRecord, ConsoleSessionRepository } from '../../../src/domain/auth/console-session.repository';
import type { ConsoleUserRecord, ConsoleUserRepository } from '../../../src/domain/auth/console-user.repository';
import type { Tx } from '../../../src/domain/transaction';
import { MemoryRows } from './transactor';

/** console_users in memory: e-mail addresses unique. */
export class MemoryConsoleUserRepository extends MemoryRows<ConsoleUserRecord> implements ConsoleUserRepository {
  async insert(_tx: Tx, user: ConsoleUserRecord): Promise<boolean> {
    if (this.all().some((u) => u.email === user.email)) return false;
    this.rows.set(user.id, structuredClone(user));
    return true;
  }

  async count(): Promise<number> {
    return this.rows.size;
  }

  async findByEmail(email: string): Promise<ConsoleUserRecord | null> {
    const user = this.all().find((u) => u.email === email);
    return user ? structuredClone(user) : null;
  }
}

/** console_sessions in memory: token hashes unique; a live session is neither revoked nor expired. */
export class MemoryConsoleSessionRepository extends MemoryRows<ConsoleSessionRecord> implements ConsoleSessionRepository {
  constructor(private readonly users: MemoryConsoleUserRepository) {
    super();
  }

  async insert(_tx: Tx, session: ConsoleSessionRecord): Promise<void> {
    if (this.all().some((s) => s.tokenHash === session.tokenHash)) throw new Error('duplicate token hash');
    this.rows.set(session.id, structuredClone(session));
  }

  async findByTokenHash(tokenHash: string): Promise<ConsoleSessionRecord | null> {
    const session = this.all().find((s) => s.tokenHash === tokenHash);
    return session ? structuredClone(session) : null;
  }

  async liveUser(tokenHash: string, now: Date): Promise<ConsoleUserRecord | null> {
    const session = this.all().find((s) => s.tokenHash === tokenHash && s.revokedAt === null && s.expiresAt.getTime() > now.getTime());
    const user = session && this.users.rows.get(session.userId);
    return user ? structuredClone(user) : null;
  }

  async revoke(_tx: Tx, tokenHash: string, at: Date): Promise<boolean> {
    const session = this.all().find((s) => s.tokenHash === tokenHash && s.revokedAt === null);
    if (!session) return false;
    session.revokedAt = at;
    return true;
  }
}
