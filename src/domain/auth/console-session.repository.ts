// The console_sessions table: a session is found by its token's SHA-256;
// the token itself is never stored.
import type { MikroORM } from '@mikro-orm/postgresql';
import { emOf } from '../pg-transactor';
import type { Tx } from '../transaction';
import { ConsoleSessionSchema, type ConsoleSession } from './console-session.entity';
import { consoleUserRecord, type ConsoleUserRecord } from './console-user.repository';

export interface ConsoleSessionRecord {
  id: string;
  userId: string;
  tokenHash: string;
  expiresAt: Date;
  revokedAt: Date | null;
  createdAt: Date;
  ip: string | null;
}

export interface ConsoleSessionRepository {
  insert(tx: Tx, session: ConsoleSessionRecord): Promise<void>;
  /** The session of a token hash, live or not. */
  findByTokenHash(tokenHash: string): Promise<ConsoleSessionRecord | null>;
  /** The user of a session that is neither revoked nor expired at `now`. */
  liveUser(tokenHash: string, now: Date): Promise<ConsoleUserRecord | null>;
  /** Revokes the token's session unless it already is; false when there is none to revoke. */
  revoke(tx: Tx, tokenHash: string, at: Date): Promise<boolean>;
}

const record = (s: ConsoleSession): ConsoleSessionRecord => ({
  id: s.id,
  userId: s.user.id,
  tokenHash: s.tokenHash,
  expiresAt: s.expiresAt,
  revokedAt: s.revokedAt ?? null,
  createdAt: s.createdAt,
  ip: s.ip ?? null,
});

export class PgConsoleSessionRepository implements ConsoleSessionRepository {
  constructor(private readonly orm: MikroORM) {}

  async insert(tx: Tx, session: ConsoleSessionRecord): Promise<void> {
    const { userId, ...rest } = session;
    emOf(tx).create(ConsoleSessionSchema, { ...rest, user: userId });
    await emOf(tx).flush();
  }

  async findByTokenHash(tokenHash: string): Promise<ConsoleSessionRecord | null> {
    const session = await this.orm.em.fork().findOne(ConsoleSessionSchema, { tokenHash });
    return session ? record(session) : null;
  }

  async liveUser(tokenHash: string, now: Date): Promise<ConsoleUserRecord | null> {
    const session = await this.orm.em.fork().findOne(ConsoleSessionSchema, { tokenHash, revokedAt: null, expiresAt: { $gt: now } }, { populate: ['user'] });
    return session ? consoleUserRecord(session.user) : null;
  }

  async revoke(tx: Tx, tokenHash: string, at: Date): Promise<boolean> {
    const em = emOf(tx);
    const session = await em.findOne(ConsoleSessionSchema, { tokenHash, revokedAt: null });
    if (!session) return false;
    session.revokedAt = at;
    await em.flush();
    return true;
  }
}
