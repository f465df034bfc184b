import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded';
import { migrate, openOrm } from './orm';

// bigint (int8) and numeric come back as strings by default; our bigints are
// token counts and micro-units that fit easily in a double's 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface Database {
  url: string;
  orm: MikroORM;
  /** A small pool for the hot path (auth, metering), written in plain SQL. */
  pool: pg.Pool;
  close(): Promise<void>;
}

export interface OpenOptions {
  logger?: Logger;
  migrate?: boolean;
}

export async function openDatabase(config: Config, options: OpenOptions = {}): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (url === undefined) {
    embedded = await startEmbeddedPostgres({
      dataDir: path.join(config.dataDir, 'pg'),
      port: config.embeddedPgPort,
      database: 'gateway',
      persistent: true,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    url = embedded.url;
  }
  return connectDatabase(url, { ...options, onClose: embedded ? () => embedded.stop() : undefined });
}

export async function connectDatabase(
  url: string,
  options: OpenOptions & { onClose?: (() => Promise<void>) | undefined } = {},
): Promise<Database> {
  const orm = await openOrm(url);
  if (options.migrate !== false) await migrate(orm);
  const pool = new pg.Pool({ connectionString: url, max: 8, idleTimeoutMillis: 30_000 });
  pool.on('error', (error) => options.logger?.warn({ err: error.message }, 'idle database connection failed'));
  return {
    url,
    orm,
    pool,
    async close() {
      await pool.end();
      await orm.close(true);
      await options.onClose?.();
    },
  };
}
