// GATEWAY_WORKERS > 1 (docs/architecture.md §15): this process serves nothing itself. It
// starts the embedded PostgreSQL when DATABASE_URL is unset, migrates and
// bootstraps once, then forks the workers (src/main.ts again, through Node's
// cluster module), which share the listening port and open the database by
// URL. Workers are stateless; cross-worker effects (key and credit changes)
// reach every worker through its own LISTEN/NOTIFY change feed.
//
// A worker that dies unexpectedly is replaced; if they keep dying at start-up
// the primary gives up rather than spin. SIGTERM/SIGINT: every worker drains
// (its own SIGTERM handler: stop accepting, finish in flight, flush usage),
// the primary waits for them, stops the embedded database and exits 0.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { connectDatabase, startDatabaseServer } from '../db/database';
import type { FirstStartCredentials } from '../domain/bootstrap';
import { serveClusterMetrics } from '../metrics/cluster-metrics';
import { loadCatalog } from '../routing/catalog';
import { entities } from '../entities';

export interface PrimaryHooks {
  /** Every worker listens: show the first-start credentials, if any, once. */
  ready(firstStart: FirstStartCredentials | null): void;
}

/** A worker that dies sooner than this after its start counts towards the crash loop. */
const QUICK_DEATH_MS = 10_000;
const CRASH_LOOP_LIMIT = 5;

export async function runPrimary(config: Config, logger: Logger, hooks: PrimaryHooks): Promise<void> {
  const log = logger.child({ role: 'primary' });
  // Loaded here too, so a bad catalog stops start-up once instead of in a restart loop.
  const catalog = await loadCatalog(config.catalogPath, config.upstreamEnv);
  const server = await startDatabaseServer(config, log);
  let firstStart: FirstStartCredentials | null;
  const database = await connectDatabase(server.url, { entities, logger: log });
  try {
    const { bootstrapInstallation } = await import('../app');
    firstStart = await bootstrapInstallation({ config, database, logger: log, catalog });
  } finally {
    await database.close();
  }
  serveClusterMetrics();

  const started = new Map<number, number>();
  const env = { DATABASE_URL: server.url };
  let stopping = false;
  let quickDeaths = 0;
  let announced = false;
  const listening = new Set<number>();
  const fork = (): Worker => {
    const worker = cluster.fork(env);
    started.set(worker.id, Date.now());
    return worker;
  };

  const stop = async (reason: string, exitCode: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'draining workers');
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    const exited = Promise.all(workers.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve())))));
    for (const worker of workers) worker.process.kill('SIGTERM');
    let forced = false;
    // Each worker bounds its own drain; this only catches one that hangs.
    const force = setTimeout(() => {
      forced = true;
      for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, config.shutdownGraceMs + 15_000);
    await exited;
    clearTimeout(force);
    if (forced) log.warn('a worker did not stop in time and was killed');
    await server.stop().catch((error: unknown) => log.error({ err: error }, 'stopping the embedded database failed'));
    log.info('stopped');
    process.exit(forced ? 1 : exitCode);
  };

  cluster.on('listening', (worker) => {
    listening.add(worker.id);
    if (!announced && listening.size >= config.workers) {
      announced = true;
      log.info({ url: `http://${config.host}:${config.port}`, workers: config.workers }, 'gateway ready');
      hooks.ready(firstStart);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker.id);
    const lived = Date.now() - (started.get(worker.id) ?? 0);
    started.delete(worker.id);
    if (stopping) return;
    quickDeaths = lived < QUICK_DEATH_MS ? quickDeaths + 1 : 0;
    if (quickDeaths >= CRASH_LOOP_LIMIT) {
      log.error({ worker: worker.id, code, signal }, 'workers keep dying at start-up; stopping');
      void stop('crash loop', 1);
      return;
    }
    log.warn({ worker: worker.id, code, signal, lived_ms: lived }, 'worker died; starting another');
    setTimeout(() => {
      if (!stopping) fork();
    }, Math.min(quickDeaths * 1_000, 5_000));
  });

  process.on('SIGTERM', () => void stop('SIGTERM', 0));
  process.on('SIGINT', () => void stop('SIGINT', 0));
  for (let i = 0; i < config.workers; i++) fork();
}
