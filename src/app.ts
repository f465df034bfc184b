// The composition root: creates every service and adapter once and hands them
// down. Nothing else constructs services; there are no module singletons.
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config';
import { installGraphql } from './control-plane/graphql/install';
import { installRestControlPlane } from './control-plane/rest/rest-control-plane';
import { CHANNELS, ChangeFeed } from './db/change-feed';
import type { Database } from './db/database';
import type { Actor } from './domain/actor';
import { AccountService } from './domain/accounts/account.service';
import { AuditService } from './domain/audit/audit.service';
import { SessionService } from './domain/auth/session.service';
import { bootstrap, type FirstStartCredentials } from './domain/bootstrap';
import { ApiKeyService } from './domain/keys/api-key.service';
import { chatHandlers } from './data-plane/chat/chat.handlers';
import { installDataPlane } from './data-plane/http/data-plane';
import { errorFormFor } from './data-plane/http/error-envelopes';
import { sendError } from './data-plane/http/serve-call';
import { KeyAuthenticator } from './data-plane/key-auth';
import { messagesHandlers } from './data-plane/messages/messages.handlers';
import { modelsHandlers } from './data-plane/models/models.handlers';
import { Pipeline } from './data-plane/pipeline';
import { AppError } from './errors';
import { createGuardrails, defaultDetectors, resolvePolicies } from './guardrails/index';
import { loadContract } from './http/openapi-router';
import { ensureUsagePartitions } from './metering/usage-partitions';
import { UsageRecorder } from './metering/usage-recorder';
import { createProviderRegistry } from './providers/registry';
import { CircuitBreaker } from './routing/circuit-breaker';
import { createServer } from './http/server';
import { CreditMonitor } from './metering/credit-monitor';
import { UsageQueryService } from './metering/usage-query.service';
import type { Catalog } from './routing/catalog.types';

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor | null;
  }
}

export interface Services {
  catalog: Catalog;
  accounts: AccountService;
  audit: AuditService;
  sessions: SessionService;
  keys: ApiKeyService;
  credit: CreditMonitor;
  usage: UsageQueryService;
  changes: ChangeFeed;
  recorder: UsageRecorder;
  pipeline: Pipeline;
}

export interface App {
  server: FastifyInstance;
  services: Services;
  /** Set on a first start with no console users: shown once by main. */
  firstStart: FirstStartCredentials | null;
  close(): Promise<void>;
}

export interface AppOptions {
  config: Config;
  database: Database;
  logger: Logger;
  catalog: Catalog;
}

const CONTRACT = (name: string) => fileURLToPath(new URL(`../openapi/${name}`, import.meta.url));

export async function createApp(options: AppOptions): Promise<App> {
  const { config, database, logger, catalog } = options;
  await ensureUsagePartitions(database.pool);
  const changes = new ChangeFeed(database.url, logger.child({ component: 'change-feed' }));
  await changes.start();

  const audit = new AuditService(database.orm);
  const accounts = new AccountService(database.orm, audit, { timezone: config.timezone, currency: catalog.currency });
  const sessions = new SessionService(database.orm, config.sessionTtlHours * 3600_000);
  const credit = new CreditMonitor(database.pool);
  const models = { has: (name: string) => catalog.modelsByName.has(name), names: () => catalog.models.map((m) => m.name) };
  const keys = new ApiKeyService(database.orm, accounts, audit, models, credit);
  changes.on(CHANNELS.accounts, (accountId) => credit.forget(accountId));
  changes.onReset(() => credit.clear());

  const usage = new UsageQueryService(database.pool, accounts, catalog, credit);
  const recorder = new UsageRecorder(database.pool, credit, logger.child({ component: 'metering' }));
  const guardrails = createGuardrails({
    detectors: defaultDetectors(catalog.guardrails.blockList),
    policies: resolvePolicies(catalog.guardrails.policies),
  });
  const pipeline = new Pipeline({
    catalog,
    providers: createProviderRegistry(),
    guardrails: async () => guardrails,
    recorder,
    breaker: new CircuitBreaker(),
    logger: logger.child({ component: 'pipeline' }),
  });
  const keyAuth = new KeyAuthenticator(database.pool, changes, credit);
  const services: Services = { catalog, accounts, audit, sessions, keys, credit, usage, changes, recorder, pipeline };
  const firstStart = await bootstrap(accounts, sessions, config.bootstrapToken);

  const server = createServer(logger);
  let ready = true;
  server.get('/healthz', async () => ({ status: 'ok' }));
  server.get('/readyz', async (_request, reply) => {
    const checks = { database: false, catalog: catalog.models.length > 0, change_feed: changes.connected };
    try {
      await database.pool.query('select 1');
      checks.database = true;
    } catch {
      checks.database = false;
    }
    const ok = ready && checks.database && checks.catalog;
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable', checks });
  });

  await installRestControlPlane(server, services, await loadContract(CONTRACT('control.yaml')));
  const graphql = await installGraphql(server, services);
  await installDataPlane(server, {
    contract: await loadContract(CONTRACT('messages.yaml')),
    keyAuth,
    pipeline,
    handlers: { ...messagesHandlers(pipeline), ...chatHandlers(pipeline, catalog), ...modelsHandlers(catalog) },
  });
  server.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const error = new AppError('not_found', 'route_not_found', `no route ${request.method} ${path}`);
    if (path.startsWith('/v1/')) return sendError(reply, errorFormFor(path, request.headers), error, request.id);
    return reply.code(404).send({ error: { code: error.code, message: error.message } });
  });
  await server.ready();

  return {
    server,
    services,
    firstStart,
    async close() {
      ready = false;
      await graphql.stop();
      await server.close();
      await recorder.close();
      await changes.close();
    },
  };
}
