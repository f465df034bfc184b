// `npm start`: configuration → database (embedded unless DATABASE_URL) →
// catalog → app → listen; SIGTERM/SIGINT drain and exit 0.
import { createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { openDatabase } from './db/database';
import { createLogger } from './logger';
import { loadCatalog } from './routing/catalog';

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
  const logger = createLogger(config.logLevel);
  const catalog = await loadCatalog(config.catalogPath, config.upstreamEnv);
  for (const warning of catalog.warnings ?? []) logger.warn({ catalog: config.catalogPath ?? 'built-in' }, warning);

  logger.info({ database: config.databaseUrl ? 'external' : 'embedded' }, 'opening database');
  const database = await openDatabase(config, { logger });
  const app = await createApp({ config, database, logger, catalog });
  await app.server.listen({ port: config.port, host: config.host });
  const base = `http://${config.host}:${config.port}`;
  logger.info({ url: base, models: catalog.models.map((m) => m.name) }, 'gateway ready');

  if (app.firstStart) {
    // Shown once, on the terminal only (never through the logger): the
    // first owner's credentials on a fresh installation.
    process.stdout.write(
      [
        '',
        'First start: created the owner of account "default".',
        `  console:  ${base}/console`,
        `  e-mail:   ${app.firstStart.email}`,
        `  password: ${app.firstStart.password}`,
        `  session token (Authorization: Bearer …): ${app.firstStart.token}`,
        'These are shown once. Set GATEWAY_BOOTSTRAP_TOKEN to choose the token yourself.',
        '',
      ].join('\n') + '\n',
    );
  }

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
}

main().catch((error: unknown) => {
  process.stderr.write(`gateway failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
