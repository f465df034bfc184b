// The only reader of process.env. Every variable is parsed and checked once, at
// boot; a bad value stops start-up with a message naming the variable.
import net from 'node:net';
import path from 'node:path';
import { DEFAULT_SYSTEM_DATA_DIR } from './db/root-placement';
import { DEFAULT_HEAP_GROWTH_PERCENT } from './heap';
import { DEFAULT_BODIES_PER_CLIENT } from './http/body-budget';

export interface Config {
  port: number;
  host: string;
  /** Unset: embedded PostgreSQL under `dataDir/pg`. */
  databaseUrl: string | undefined;
  dataDir: string;
  /**
   * As root: where the embedded cluster (and a copy of the PostgreSQL
   * binaries) go when the `postgres` user cannot enter dataDir (or
   * node_modules), e.g. a checkout in /root. See src/db/root-placement.ts.
   */
  systemDataDir: string;
  /** Port of the embedded PostgreSQL (only used when databaseUrl is unset). */
  embeddedPgPort: number;
  catalogPath: string | undefined;
  bootstrapToken: string | undefined;
  timezone: string;
  logLevel: string;
  sessionTtlHours: number;
  workers: number;
  shutdownGraceMs: number;
  /** How much V8 may grow the heap between full collections, in percent (src/heap.ts); 0: V8's default. */
  heapGrowthPercent: number;
  /** How long a stream waits for a client that stopped reading before hanging up on it. */
  streamStallMs: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** Request-body bytes in flight before new requests get 503 overloaded; unset: an eighth of the heap limit. */
  bodyBudgetBytes: number | undefined;
  /** Request-body bytes one client address may hold in flight (GATEWAY_CLIENT_BODY_BUDGET_MB); unset: a quarter of the budget. */
  clientBodyBudgetBytes: number | undefined;
  /** Request bodies one client address may be sending at once (GATEWAY_BODIES_PER_CLIENT). */
  bodiesPerClient: number;
  /** Proxies (IPs or CIDRs) whose X-Forwarded-For names the client (login throttling, audit IPs, bodies per client). */
  trustedProxies: string[];
  /** How long a client may take to send the request line and headers. */
  headersTimeoutMs: number;
  /** How long a client may take to send a whole request, body included (replies may stream longer). */
  requestTimeoutMs: number;
  /**
   * Whether a usage batch's commit waits for PostgreSQL to flush its WAL to
   * disk (`on`, the default) or only to write it to the WAL buffers (`off`).
   * Either way the record is committed before the reply: a gateway killed
   * with -9 loses nothing. With `off`, a PostgreSQL or machine crash can lose
   * the records of the last ~0.6 s (3 × wal_writer_delay) of answered calls.
   * What `off` saves on the wait for the group commit is too little to give
   * up the crash guarantee by default (the bench's figure is in the README,
   * Benchmarks).
   */
  usageSyncCommit: boolean;
  /**
   * How long a process's credit lease (its reservations against accounts'
   * credit limits) outlives its last heartbeat: after a kill -9 nothing the
   * process held stays reserved for longer. Heartbeats come every third of it.
   */
  creditLeaseTtlMs: number;
  /**
   * How often each process writes the cancellation of rotated-away keys whose
   * grace has ended. Admission refuses such a key from the instant its grace
   * ends regardless; the sweep stores the state, audits it and cuts streams
   * still running on the key.
   */
  rotationSweepMs: number;
  /**
   * How long one control-plane request (REST or GraphQL) may wait for its
   * turn and work in the database together; past it, 503
   * `control_plane_timeout`. Report statements are cancelled by PostgreSQL
   * after the same time (statement_timeout).
   */
  controlPlaneTimeoutMs: number;
  /**
   * How long a stored Responses-form response (and a conversation, from its
   * last write) is kept before the purge deletes it (GATEWAY_RESPONSES_RETENTION_DAYS).
   */
  responsesRetentionDays: number;
  /**
   * GATEWAY_WEBHOOK_ALLOW_PRIVATE=1: webhook URLs may point at loopback and
   * private addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7).
   * Link-local (cloud metadata), multicast and 0.0.0.0 stay refused.
   */
  webhookAllowPrivate: boolean;
  /** GATEWAY_WEBHOOK_POLL_MS: how often each process's dispatcher looks for due webhook deliveries. */
  webhookPollMs: number;
  /** Upstream credentials and base URLs, looked up by name (catalog `api_key_env`). */
  upstreamEnv: Readonly<Record<string, string | undefined>>;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** GATEWAY_TRUSTED_PROXIES: comma-separated IPv4/IPv6 addresses or CIDRs. */
function trustedProxies(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw.split(',').map((entry) => {
    const value = entry.trim();
    const [address = '', bits, extra] = value.split('/');
    const v4 = IPV4.test(address);
    const v6 = !v4 && address.includes(':') && net.isIPv6(address);
    const maxBits = v4 ? 32 : 128;
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if ((!v4 && !v6) || !bitsOk || extra !== undefined) {
      throw new ConfigError('GATEWAY_TRUSTED_PROXIES', `"${value}" is not an IP address or CIDR (e.g. 10.0.0.0/8, 192.168.1.10, fd00::/8)`);
    }
    return value;
  });
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigError(name, `must be on or off, got "${raw}"`);
}

function zeroOne(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw new ConfigError(name, `must be 1 or 0, got "${raw}"`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Config {
  const timezone = env.GATEWAY_TIMEZONE || 'UTC';
  if (!isValidTimeZone(timezone)) throw new ConfigError('GATEWAY_TIMEZONE', `unknown IANA time zone "${timezone}"`);

  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with postgres:// or postgresql://');
  }

  const bootstrapToken = env.GATEWAY_BOOTSTRAP_TOKEN || undefined;
  if (bootstrapToken !== undefined && bootstrapToken.length < 16) {
    throw new ConfigError('GATEWAY_BOOTSTRAP_TOKEN', 'must be at least 16 characters');
  }

  const metricsToken = env.GATEWAY_METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    throw new ConfigError('GATEWAY_METRICS_TOKEN', 'must be at least 16 characters, without spaces');
  }

  const bodyBudgetBytes = env.GATEWAY_BODY_BUDGET_MB ? int(env, 'GATEWAY_BODY_BUDGET_MB', 0, 1, 65_536) * 1024 * 1024 : undefined;
  const clientBodyBudgetBytes = env.GATEWAY_CLIENT_BODY_BUDGET_MB ? int(env, 'GATEWAY_CLIENT_BODY_BUDGET_MB', 0, 1, 65_536) * 1024 * 1024 : undefined;
  if (bodyBudgetBytes !== undefined && clientBodyBudgetBytes !== undefined && clientBodyBudgetBytes > bodyBudgetBytes) {
    throw new ConfigError('GATEWAY_CLIENT_BODY_BUDGET_MB', `must not be more than GATEWAY_BODY_BUDGET_MB (${env.GATEWAY_BODY_BUDGET_MB})`);
  }
  const systemDataDir = env.GATEWAY_SYSTEM_DATA_DIR || DEFAULT_SYSTEM_DATA_DIR;
  if (!path.isAbsolute(systemDataDir)) throw new ConfigError('GATEWAY_SYSTEM_DATA_DIR', 'must be an absolute path');

  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);

  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    dataDir: env.GATEWAY_DATA_DIR || '.data',
    systemDataDir,
    embeddedPgPort: int(env, 'GATEWAY_EMBEDDED_PG_PORT', 54329, 1024, 65535),
    catalogPath: env.GATEWAY_CATALOG || undefined,
    bootstrapToken,
    timezone,
    logLevel,
    sessionTtlHours: int(env, 'GATEWAY_SESSION_TTL_HOURS', 12, 1, 24 * 30),
    workers: int(env, 'GATEWAY_WORKERS', 1, 1, 64),
    shutdownGraceMs: int(env, 'GATEWAY_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    metricsToken,
    streamStallMs: int(env, 'GATEWAY_STREAM_STALL_MS', 60_000, 100, 3_600_000),
    heapGrowthPercent: int(env, 'GATEWAY_HEAP_GROWTH_PERCENT', DEFAULT_HEAP_GROWTH_PERCENT, 0, 400),
    bodyBudgetBytes,
    clientBodyBudgetBytes,
    bodiesPerClient: int(env, 'GATEWAY_BODIES_PER_CLIENT', DEFAULT_BODIES_PER_CLIENT, 1, 10_000),
    trustedProxies: trustedProxies(env.GATEWAY_TRUSTED_PROXIES),
    headersTimeoutMs: int(env, 'GATEWAY_HEADERS_TIMEOUT_MS', 15_000, 1_000, 600_000),
    requestTimeoutMs: int(env, 'GATEWAY_REQUEST_TIMEOUT_MS', 60_000, 1_000, 3_600_000),
    usageSyncCommit: onOff(env, 'GATEWAY_USAGE_SYNC_COMMIT', true),
    creditLeaseTtlMs: int(env, 'GATEWAY_CREDIT_LEASE_TTL_MS', 15_000, 300, 600_000),
    rotationSweepMs: int(env, 'GATEWAY_ROTATION_SWEEP_MS', 10_000, 100, 3_600_000),
    controlPlaneTimeoutMs: int(env, 'GATEWAY_CONTROL_PLANE_TIMEOUT_MS', 10_000, 100, 600_000),
    responsesRetentionDays: int(env, 'GATEWAY_RESPONSES_RETENTION_DAYS', 30, 1, 3650),
    webhookAllowPrivate: zeroOne(env, 'GATEWAY_WEBHOOK_ALLOW_PRIVATE'),
    webhookPollMs: int(env, 'GATEWAY_WEBHOOK_POLL_MS', 1_000, 50, 60_000),
    upstreamEnv: env,
  };
}
