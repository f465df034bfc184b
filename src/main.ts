// `npm start`: configuration → database (embedded unless DATABASE_URL) →
// catalog → app → listen; SIGTERM/SIGINT drain and exit 0.
// With GATEWAY_WORKERS > 1 this process becomes the cluster primary
// (src/cluster/primary.ts) and each forked worker runs `serve` below.
import cluster from 'node:cluster';
import { runPrimary } from './cluster/primary';
import { ConfigError, loadConfig, type Config } from './config';
import { openDatabase } from './db/database';
import type { FirstStartCredentials } from './domain/bootstrap';
import { saveFirstStartCredentials } from './first-start';
import { tuneHeapGrowth } from './heap';
import { createLogger } from './logger';
import { loadCatalog } from './routing/catalog';
import type { Logger } from 'pino';
import { entities } from './entities';

/** One serving process: the whole gateway, or one cluster worker (`workerId`). */
async function serve(config: Config, logger: Logger, workerId: number | undefined): Promise<void> {
  const catalog = await loadCatalog(config.catalogPath, config.upstreamEnv);
  for (const warning of catalog.warnings ?? []) logger.warn({ catalog: config.catalogPath ?? 'built-in' }, warning);

  logger.info({ database: config.databaseUrl ? 'external' : 'embedded' }, 'opening database');
  // A worker's primary has migrated and bootstrapped already.
  const database = await openDatabase(config, { entities, logger, migrate: workerId === undefined });
  // Loaded here, not at the top: a cluster primary never needs the app's modules.
  const { createApp } = await import('./app');
  const app = await createApp({
    config,
    database,
    logger,
    catalog,
    ...(workerId === undefined ? {} : { bootstrap: false, clusterWorker: { id: workerId } }),
  });
  await app.server.listen({ port: config.port, host: config.host });
  const base = `http://${config.host}:${config.port}`;
  logger.info({ url: base, models: catalog.models.map((m) => m.name), ...(workerId === undefined ? {} : { worker: workerId }) }, 'gateway ready');
  if (app.firstStart) await saveFirstStartCredentials(config.dataDir, base, app.firstStart, logger);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    const force = setTimeout(() => {
      logger.warn('drain timed out; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 5_000);
    force.unref();
    app
      .close()
      .then(() => database.close())
      .then(() => {
        logger.info('stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The primary gone (killed): nobody supervises this worker or routes to it any more.
  if (workerId !== undefined) process.on('disconnect', () => stop('primary gone'));
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  tuneHeapGrowth(config.heapGrowthPercent);
  const logger = createLogger(config.logLevel);
  if (config.workers > 1 && cluster.isPrimary) {
    await runPrimary(config, logger, {
      ready: (firstStart: FirstStartCredentials | null) => {
        if (firstStart) {
          saveFirstStartCredentials(config.dataDir, `http://${config.host}:${config.port}`, firstStart, logger).catch((error: unknown) =>
            logger.error({ err: error }, 'writing the first-start credentials failed'),
          );
        }
      },
    });
    return;
  }
  const workerId = cluster.isWorker ? cluster.worker?.id : undefined;
  await serve(config, workerId === undefined ? logger : logger.child({ worker: workerId }), workerId);
}

main().catch((error: unknown) => {
  process.stderr.write(`gateway failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
