import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';
import { startEmbeddedPostgres } from './embedded';
import { migrate, openOrm, type EntityList } from './orm';

// bigint (int8) and numeric come back as strings by default; our bigints are
// token counts and micro-units that fit easily in a double's 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface Database {
  url: string;
  orm: MikroORM;
  /** A small pool for the hot path (auth, metering), written in plain SQL. */
  pool: pg.Pool;
  /**
   * The control plane's report reads (usage, settlement, credit status) on a
   * pool of their own: a wide report can never take the connections metering
   * needs. Its statements are cancelled after the control plane's timeout.
   */
  reportPool: pg.Pool;
  /** One connection for /readyz alone: readiness never queues behind data-plane or control-plane work. */
  probePool: pg.Pool;
  close(): Promise<void>;
}

/**
 * The hot path (key auth, credit, metering) must fail fast when PostgreSQL is
 * gone rather than hold calls open: a refused connection fails at once, an
 * unreachable host after `connectionTimeoutMillis`, and a statement on a
 * connection that went silent after `query_timeout` (client side) or
 * `statement_timeout` (server side). Such failures answer 503 (see
 * db-errors.ts); the pool opens fresh connections once the server is back.
 */
const HOT_PATH_BOUNDS = {
  connectionTimeoutMillis: 2_000,
  // The server cancels first (the connection stays usable); the client gives up on a silent one.
  statement_timeout: 10_000,
  query_timeout: 12_000,
  keepAlive: true,
} as const;

/** Connections for report reads (usage, settlement): a third pool's worth, never the metering pool's. */
const REPORT_POOL_SIZE = 4;

/** GATEWAY_CONTROL_PLANE_TIMEOUT_MS's default (config.ts), for databases opened without a config (tests, the CLI). */
const DEFAULT_CONTROL_PLANE_TIMEOUT_MS = 10_000;

/** /readyz answers within a load balancer's usual health-check timeout, or says the database is not there. */
const PROBE_BOUNDS = { connectionTimeoutMillis: 2_000, statement_timeout: 2_000, query_timeout: 3_000, keepAlive: true } as const;

/** What opening the database reads of the configuration (config.ts's Config has these fields). */
export interface DatabaseSettings {
  /** DATABASE_URL; unset: the embedded cluster under `dataDir/pg`. */
  databaseUrl: string | undefined;
  dataDir: string;
  systemDataDir: string;
  embeddedPgPort: number;
  /** GATEWAY_CONTROL_PLANE_TIMEOUT_MS: the report pool's statement_timeout. */
  controlPlaneTimeoutMs: number;
}

export interface OpenOptions {
  /** The tables the ORM maps (src/entities.ts). */
  entities: EntityList;
  logger?: Logger;
  migrate?: boolean;
  /** Migrations from src/db/migrations rather than the compiled-in list (see ormOptions). */
  authoring?: boolean;
  /** GATEWAY_CONTROL_PLANE_TIMEOUT_MS: the report pool's statement_timeout. */
  controlPlaneTimeoutMs?: number;
}

export async function openDatabase(config: DatabaseSettings, options: OpenOptions): Promise<Database> {
  const server = await startDatabaseServer(config, options.logger);
  return connectDatabase(server.url, { controlPlaneTimeoutMs: config.controlPlaneTimeoutMs, ...options, onClose: () => server.stop() });
}

export interface DatabaseServer {
  url: string;
  /** Stops the embedded cluster this process started; a no-op for DATABASE_URL's server or a shared cluster. */
  stop(): Promise<void>;
}

/**
 * DATABASE_URL's server, or the embedded cluster under `dataDir/pg`, started
 * if need be (the GATEWAY_WORKERS primary starts it once for its workers).
 */
export async function startDatabaseServer(config: Omit<DatabaseSettings, 'controlPlaneTimeoutMs'>, logger?: Logger): Promise<DatabaseServer> {
  if (config.databaseUrl !== undefined) return { url: config.databaseUrl, stop: async () => undefined };
  return startEmbeddedPostgres({
    dataDir: path.join(config.dataDir, 'pg'),
    systemDataDir: config.systemDataDir,
    port: config.embeddedPgPort,
    database: 'gateway',
    persistent: true,
    callerHandlesSignals: true,
    ...(logger ? { logger } : {}),
  });
}

export async function connectDatabase(
  url: string,
  options: OpenOptions & { onClose?: (() => Promise<void>) | undefined },
): Promise<Database> {
  const orm = await openOrm(url, options.entities, { authoring: options.authoring ?? false });
  if (options.migrate !== false) await migrate(orm);
  const pool = new pg.Pool({ connectionString: url, max: 8, idleTimeoutMillis: 30_000, ...HOT_PATH_BOUNDS });
  pool.on('error', (error) => options.logger?.warn({ err: error.message }, 'idle database connection failed'));
  const reportTimeoutMs = options.controlPlaneTimeoutMs ?? DEFAULT_CONTROL_PLANE_TIMEOUT_MS;
  const reportPool = new pg.Pool({
    connectionString: url,
    max: REPORT_POOL_SIZE,
    idleTimeoutMillis: 30_000,
    ...HOT_PATH_BOUNDS,
    statement_timeout: reportTimeoutMs,
    query_timeout: reportTimeoutMs + 2_000,
  });
  reportPool.on('error', (error) => options.logger?.warn({ err: error.message }, 'idle report connection failed'));
  const probePool = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 60_000, ...PROBE_BOUNDS });
  probePool.on('error', (error) => options.logger?.warn({ err: error.message }, 'idle readiness connection failed'));
  return {
    url,
    orm,
    pool,
    reportPool,
    probePool,
    async close() {
      await pool.end();
      await reportPool.end();
      await probePool.end();
      await orm.close(true);
      await options.onClose?.();
    },
  };
}
