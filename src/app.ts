// The composition root: creates every service and adapter once and hands them
// down. Nothing else constructs services; there are no module singletons.
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config';
import { installConsole } from './console/console';
import { installGraphql } from './control-plane/graphql/install';
import { installRestControlPlane } from './control-plane/rest/rest-control-plane';
import { CONTROL_PLANE_LIMITS, ControlPlaneGate } from './control-plane/control-plane-gate';
import type { ControlPlaneServices } from './control-plane/control-plane-services';
import { CHANNELS, ChangeFeed } from './db/change-feed';
import type { Database } from './db/database';
import { AccountService } from './domain/accounts/account.service';
import { PgAccountRepository } from './domain/accounts/account.repository';
import { PgTransactor } from './domain/pg-transactor';
import { AuditService } from './domain/audit/audit.service';
import { PgAuditRepository } from './domain/audit/audit.repository';
import { GuardrailPolicyService } from './domain/guardrails/guardrail-policy.service';
import { PgGuardrailPolicyRepository } from './domain/guardrails/account-guardrail-policy.repository';
import { SessionService } from './domain/auth/session.service';
import { PgConsoleSessionRepository } from './domain/auth/console-session.repository';
import { PgConsoleUserRepository } from './domain/auth/console-user.repository';
import { bootstrap, type FirstStartCredentials } from './domain/bootstrap';
import { ApiKeyService } from './domain/keys/api-key.service';
import { KeyRotationService } from './domain/keys/key-rotation.service';
import { KeyRotationSweep } from './domain/keys/key-rotation.sweep';
import { PgApiKeyRepository } from './domain/keys/api-key.repository';
import { StoredResponsesService } from './domain/stored/stored-responses.service';
import { chatHandlers } from './data-plane/chat/chat.handlers';
import { installDataPlane } from './data-plane/http/data-plane';
import { DataPlaneFastPath } from './data-plane/http/fast-path';
import { sendUnroutedError } from './data-plane/http/error-envelopes';
import { DataPlaneLifecycle } from './data-plane/http/lifecycle';
import { KeyAuthenticator } from './data-plane/key-auth';
import { messagesHandlers } from './data-plane/messages/messages.handlers';
import { modelsHandlers } from './data-plane/models/models.handlers';
import { responsesHandlers } from './data-plane/responses/responses.handlers';
import { Pipeline, deploymentId } from './data-plane/pipeline';
import { ConversationStore } from './data-plane/stored/conversation-store';
import { ResponseStore } from './data-plane/stored/response-store';
import { StatefulResponses } from './data-plane/stored/stateful-responses';
import { storedHandlers } from './data-plane/stored/stored.handlers';
import { appError, reportedError, type AppError } from './errors';
import { sendRestError } from './control-plane/rest/rest-errors';
import { GuardrailEngineCache, defaultDetectors } from './guardrails/index';
import { loadContract } from './http/openapi-router';
import { PROJECT_ROOT } from './paths';
import { ensureUsagePartitions } from './metering/usage-partitions';
import { UsageRecorder } from './metering/usage-recorder';
import { createProviderRegistry } from './providers/registry';
import { CircuitBreaker } from './routing/circuit-breaker';
import { BodyBudget, defaultBodyBudgetBytes } from './http/body-budget';
import { clientAddresses } from './core/client-address';
import { BODY_LIMIT } from './http/body-allowance';
import { createServer, pathOf } from './http/server';
import { HttpDrain } from './http/drain';
import { CreditLedger } from './metering/credit-ledger';
import { RateLimiter } from './metering/rate-limiter';
import { CreditMonitor } from './metering/credit-monitor';
import { UsageQueryService } from './metering/usage-query.service';
import type { BreakerOptions, Catalog } from './core/catalog.types';
import { WebhookDispatcher } from './domain/webhooks/webhook-dispatcher';
import { WebhookService } from './domain/webhooks/webhook.service';
import { PgWebhookRepository } from './domain/webhooks/webhook.repository';
import { PgCreditAlertRepository } from './domain/webhooks/credit-alert.repository';
import { WebhookTargetGuard } from './domain/webhooks/webhook-target';
import { Registry } from 'prom-client';
import { clusterMetricsSource } from './metrics/cluster-metrics';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { installMetrics } from './metrics/metrics-routes';

/** Every service the app made: the control plane's transports see only their part (ControlPlaneServices). */
export interface Services extends ControlPlaneServices {
  catalog: Catalog;
  /** This process's pass over rotated-away keys whose grace has ended. */
  rotationSweep: KeyRotationSweep;
  credit: CreditMonitor;
  /** Admission's credit reservations (this process's leases). */
  ledger: CreditLedger;
  changes: ChangeFeed;
  recorder: UsageRecorder;
  pipeline: Pipeline;
  /** Stored Responses-form responses and conversations (`store`, previous_response_id, the Conversations API). */
  stateful: StatefulResponses;
}

export interface App {
  server: FastifyInstance;
  services: Services;
  /** Set on a first start with no console users: shown once by main. */
  firstStart: FirstStartCredentials | null;
  metrics: GatewayMetrics;
  /** Serves the data plane's ordinary calls without Fastify's lifecycle. */
  fastPath: DataPlaneFastPath;
  close(): Promise<void>;
}

export interface AppOptions {
  config: Config;
  database: Database;
  logger: Logger;
  catalog: Catalog;
  /**
   * Whether to make the installation usable (default account, first owner,
   * GATEWAY_BOOTSTRAP_TOKEN). Cluster workers skip it: the primary ran it once.
   */
  bootstrap?: boolean;
  /** Set in a GATEWAY_WORKERS worker: its id goes out as `x-gateway-worker`, and /metrics sums every worker. */
  clusterWorker?: { id: number };
}

/** Each deployment's breaker settings: its provider's, else the catalog's. */
function breakerSettings(catalog: Catalog): (id: string) => BreakerOptions {
  const byDeployment = new Map<string, BreakerOptions>();
  for (const model of catalog.models) {
    for (const deployment of Object.values(model.routes).flat()) {
      byDeployment.set(deploymentId(deployment), deployment.provider.breaker ?? catalog.breaker);
    }
  }
  return (id) => byDeployment.get(id) ?? catalog.breaker;
}

/** The services bootstrap needs; createApp builds on the same ones. */
function accountServices({ config, database, catalog }: AppOptions, changes?: ChangeFeed) {
  const transactor = new PgTransactor(database.orm);
  const audit = new AuditService(new PgAuditRepository(database.orm));
  const accountRows = new PgAccountRepository(database.orm);
  const accounts = new AccountService(transactor, accountRows, audit, { timezone: config.timezone, currency: catalog.currency }, (accountId) =>
    changes?.emitLocal(CHANNELS.accounts, accountId),
  );
  const sessions = new SessionService(transactor, new PgConsoleUserRepository(database.orm), new PgConsoleSessionRepository(database.orm), config.sessionTtlHours * 3600_000);
  return { transactor, audit, accountRows, accounts, sessions };
}

/**
 * Makes the installation usable, once, without serving: the GATEWAY_WORKERS
 * primary runs this before forking, and its workers start with `bootstrap: false`.
 */
export async function bootstrapInstallation(options: AppOptions): Promise<FirstStartCredentials | null> {
  const { accounts, sessions } = accountServices(options);
  return bootstrap(accounts, sessions, options.config.bootstrapToken, retiredBootstrapWarning(options.logger));
}

const retiredBootstrapWarning = (logger: Logger) => (): void =>
  logger.warn('GATEWAY_BOOTSTRAP_TOKEN names a console session that was signed out or has expired; it stays retired. Choose a new token (or unset it) to get a bootstrap session again.');

const CONTRACT = (name: string) => path.join(PROJECT_ROOT, 'openapi', name);

export async function createApp(options: AppOptions): Promise<App> {
  const { config, database, logger, catalog } = options;
  await ensureUsagePartitions(database.pool);
  const changes = new ChangeFeed(database.url, logger.child({ component: 'change-feed' }));
  await changes.start();

  const { transactor, audit, accountRows, accounts, sessions } = accountServices(options, changes);
  const credit = new CreditMonitor(database.pool, catalog.minimalCallMicros);
  const models = { has: (name: string) => catalog.modelsByName.has(name), names: () => catalog.models.map((m) => m.name) };
  const keyChanged = (keyId: string) => changes.emitLocal(CHANNELS.keys, keyId);
  const keyRows = new PgApiKeyRepository(database.orm, database.pool);
  const keys = new ApiKeyService(keyRows, transactor, accounts, audit, models, credit, keyChanged);
  const rotations = new KeyRotationService(keyRows, transactor, keys, audit, keyChanged);
  const rotationSweep = new KeyRotationSweep(keyRows, transactor, audit, logger.child({ component: 'key-rotation' }), keyChanged);
  rotationSweep.start(config.rotationSweepMs);
  changes.on(CHANNELS.accounts, (accountId) => credit.forget(accountId));
  changes.onReset(() => credit.clear());

  const ledger = new CreditLedger(database.pool, { leaseTtlMs: config.creditLeaseTtlMs, logger: logger.child({ component: 'credit-ledger' }) });
  ledger.start();
  const rates = new RateLimiter(database.pool, { leaseTtlMs: config.creditLeaseTtlMs, logger: logger.child({ component: 'rate-limiter' }) });
  rates.start();
  const usage = new UsageQueryService(database.reportPool, accounts, catalog, credit);
  const recorder = new UsageRecorder(database.pool, credit, logger.child({ component: 'metering' }), config.usageSyncCommit, ledger.holder);
  const metrics = new GatewayMetrics(new Registry(), {
    usageQueueDepth: () => recorder.depth,
    usageCommits: () => recorder.commits,
    catalogModel: (name) => catalog.resolveModel(name)?.name,
    creditAdmissions: () => ledger.counts,
    rateAdmissions: () => rates.counts,
  });
  recorder.onRecord((input) => metrics.recorded(input));
  const providers = createProviderRegistry({ wrap: (adapter) => metrics.instrument(adapter) });
  // One guardrail engine per account's effective policies; a policy change
  // drops it here at once (the same local signal the account and key
  // services raise after their commits) and in every other process through NOTIFY.
  const guardrailPolicies = new GuardrailPolicyService(transactor, new PgGuardrailPolicyRepository(database.orm), accountRows, audit, {
    catalogPolicies: catalog.guardrails.policies,
    onChange: (accountId) => changes.emitLocal(CHANNELS.accounts, accountId),
  });
  const engines = new GuardrailEngineCache(defaultDetectors(catalog.guardrails.blockList), (accountId) =>
    guardrailPolicies.effectivePolicies(accountId),
  );
  changes.on(CHANNELS.accounts, (accountId) => engines.forget(accountId));
  changes.onReset(() => engines.clear());
  const pipeline = new Pipeline({
    catalog,
    providers,
    guardrails: (accountId) => engines.get(accountId),
    recorder,
    breaker: new CircuitBreaker(breakerSettings(catalog)),
    logger: logger.child({ component: 'pipeline' }),
    credit: ledger,
    rates,
  });
  const responseStore = new ResponseStore(database.pool, { retentionDays: config.responsesRetentionDays, logger: logger.child({ component: 'response-store' }) });
  responseStore.start();
  const stateful = new StatefulResponses(responseStore, new ConversationStore(database.pool, config.responsesRetentionDays), logger.child({ component: 'response-store' }));
  const keyAuth = new KeyAuthenticator(keyRows, changes, credit);
  keyAuth.onLookup = (outcome) => metrics.keyLookup(outcome);
  const controlPlane = new ControlPlaneGate({ ...CONTROL_PLANE_LIMITS, timeoutMs: config.controlPlaneTimeoutMs });
  const storedResponses = new StoredResponsesService(transactor, audit, responseStore);
  const webhookTargets = new WebhookTargetGuard({ allowPrivate: config.webhookAllowPrivate });
  const webhooks = new WebhookService(
    transactor,
    { webhooks: new PgWebhookRepository(database.orm), creditAlerts: new PgCreditAlertRepository(database.orm), accounts: accountRows },
    audit,
    accounts,
    credit,
    webhookTargets,
  );
  const dispatcher = new WebhookDispatcher({
    pool: database.pool,
    targets: webhookTargets,
    logger: logger.child({ component: 'webhooks' }),
    pollMs: config.webhookPollMs,
    minimalCallMicros: catalog.minimalCallMicros,
  });
  dispatcher.start();
  const services: Services = { catalog, accounts, audit, sessions, keys, rotations, rotationSweep, credit, ledger, usage, changes, recorder, pipeline, guardrailPolicies, controlPlane, stateful, storedResponses, webhooks };
  const firstStart = options.bootstrap === false ? null : await bootstrap(accounts, sessions, config.bootstrapToken, retiredBootstrapWarning(logger));

  const budget = new BodyBudget(config.bodyBudgetBytes ?? defaultBodyBudgetBytes(), config.bodiesPerClient, config.clientBodyBudgetBytes);
  const addresses = clientAddresses(config.trustedProxies);
  const fastPathSlot: { tryServe?: DataPlaneFastPath['tryServe'] } = {};
  const server = createServer(logger, {
    onUnroutable: unroutable,
    budget,
    fastPath: fastPathSlot,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    clientAddresses: addresses,
    ...(options.clusterWorker ? { replyHeaders: { 'x-gateway-worker': String(options.clusterWorker.id) } } : {}),
  });
  // Errors outside every API scope (e.g. an unparseable body sent to an unknown route) answer in the path's form too.
  server.setErrorHandler((error, request, reply) => unroutable(request, reply, reportedError(error, request.log, 'request failed')));
  installMetrics(server, metrics, options.clusterWorker ? clusterMetricsSource(metrics.registry) : () => metrics.registry.metrics(), config.metricsToken);
  const drain = new HttpDrain(server.server);
  let ready = true;
  server.get('/healthz', async () => ({ status: 'ok' }));
  server.get('/readyz', async (_request, reply) => {
    const checks = { database: false, catalog: catalog.models.length > 0, change_feed: changes.connected };
    try {
      // Its own connection: a busy metering or control-plane pool is not an unready instance.
      await database.probePool.query('select 1');
      checks.database = true;
    } catch {
      checks.database = false;
    }
    const ok = ready && checks.database && checks.catalog;
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable', checks });
  });

  await installRestControlPlane(server, services, await loadContract(CONTRACT('control.yaml')));
  const graphql = await installGraphql(server, services);
  await installConsole(server, { logger });
  const lifecycle = new DataPlaneLifecycle({
    contract: await loadContract(CONTRACT('messages.yaml')),
    keyAuth,
    operations: {
      ...messagesHandlers(pipeline, { stallMs: config.streamStallMs }),
      ...chatHandlers(pipeline, catalog, { stallMs: config.streamStallMs }),
      ...responsesHandlers(pipeline, catalog, stateful, { stallMs: config.streamStallMs }),
      ...storedHandlers(stateful),
      ...modelsHandlers(catalog),
    },
  });
  await installDataPlane(server, { lifecycle, drain });
  // Ordinary data-plane calls skip Fastify's lifecycle; everything else, and every odd case of those routes, stays with Fastify.
  const fastPath = new DataPlaneFastPath({
    lifecycle,
    drain,
    budget,
    clientAddresses: addresses,
    logger,
    bodyLimit: BODY_LIMIT,
    onResponse: (url, body, status, seconds) => metrics.dataPlaneResponse(url, body, status, seconds),
  });
  fastPathSlot.tryServe = (request, response) => fastPath.tryServe(request, response);
  server.setNotFoundHandler((request, reply) => {
    const path = pathOf(request.url);
    unroutable(request, reply, appError('routeNotFound', { method: request.method, path }));
  });
  await server.ready();

  return {
    server,
    services,
    firstStart,
    metrics,
    fastPath,
    async close() {
      ready = false;
      // Fastify stops listening at once and answers requests on open keep-alive
      // connections with 503 (the fast path hands them all to it from now on);
      // in-flight requests and streams get the grace period (the drain cuts
      // what is left), then usage is flushed.
      fastPath.close();
      const closing = server.close();
      const outcome = await drain.drain(config.shutdownGraceMs);
      if (outcome.cut > 0) logger.warn(outcome, 'shutdown grace period ran out; in-flight calls were cut');
      await closing;
      await graphql.stop();
      await rotationSweep.close();
      await recorder.close();
      await dispatcher.close();
      await responseStore.close();
      await ledger.close();
      await rates.close();
      await changes.close();
      providers.close();
    },
  };
}

/** A request no route answers (unknown path, malformed URL) gets the error form of the surface its path belongs to. */
function unroutable(request: FastifyRequest, reply: FastifyReply, error: AppError): void {
  const path = pathOf(request.url);
  if (path.startsWith('/v1/')) return sendUnroutedError(reply, path, request.headers, error, request.id);
  sendRestError(reply, error);
}
