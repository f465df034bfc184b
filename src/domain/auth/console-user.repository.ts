// The console_users table: e-mail addresses are unique (lower-cased by the service).
import { type MikroORM } from '@mikro-orm/postgresql';
import type { Role } from '../actor';
import { emOf } from '../pg-transactor';
import { flushUnlessTaken } from '../pg-unique';
import type { Tx } from '../transaction';
import { ConsoleUserSchema, type ConsoleUser } from './console-user.entity';

export interface ConsoleUserRecord {
  id: string;
  accountId: string;
  email: string;
  passwordHash: string;
  role: Role;
  createdAt: Date;
}

export interface ConsoleUserRepository {
  /** Adds the user; false (nothing added) when the e-mail is taken. */
  insert(tx: Tx, user: ConsoleUserRecord): Promise<boolean>;
  count(): Promise<number>;
  findByEmail(email: string): Promise<ConsoleUserRecord | null>;
}

export const consoleUserRecord = (user: ConsoleUser): ConsoleUserRecord => ({
  id: user.id,
  accountId: user.account.id,
  email: user.email,
  passwordHash: user.passwordHash,
  role: user.role,
  createdAt: user.createdAt,
});

export class PgConsoleUserRepository implements ConsoleUserRepository {
  constructor(private readonly orm: MikroORM) {}

  async insert(tx: Tx, user: ConsoleUserRecord): Promise<boolean> {
    const em = emOf(tx);
    const { accountId, ...rest } = user;
    em.create(ConsoleUserSchema, { ...rest, account: accountId });
    return flushUnlessTaken(em);
  }

  count(): Promise<number> {
    return this.orm.em.fork().count(ConsoleUserSchema, {});
  }

  async findByEmail(email: string): Promise<ConsoleUserRecord | null> {
    const user = await this.orm.em.fork().findOne(ConsoleUserSchema, { email });
    return user ? consoleUserRecord(user) : null;
  }
}
