import type { FastifyInstance } from 'fastify';
import { mountOperations, type OpenApiContract, type OperationHandler } from '../../http/openapi-router';
import type { ControlPlaneGate } from '../control-plane-gate';
import type { ControlPlaneServices } from '../control-plane-services';
import { actorOf } from '../request-actor';
import { requiredSession } from '../session-first';
import { guardrailHandlers } from './guardrail.handlers';
import { keyDefaultsHandlers, keyHandlers, sessionHandlers } from './key.handlers';
import { installRestErrorHandler } from './rest-errors';
import { storedResponsesHandlers } from './stored-responses.handlers';
import { usageHandlers } from './usage.handlers';
import { webhookHandlers } from './webhook.handlers';

/**
 * Operations outside the control-plane gate: a login has no account yet (it
 * is throttled per e-mail and client instead), and the CSV export passes each
 * page through the gate itself, so a long export never holds a turn while it
 * waits for a slow client.
 */
const UNGATED: ReadonlySet<string> = new Set(['createSession', 'exportUsage']);

/** Every other operation waits for its account's turn and answers within the control plane's deadline. */
function gated(handlers: Record<string, OperationHandler>, gate: ControlPlaneGate): Record<string, OperationHandler> {
  return Object.fromEntries(
    Object.entries(handlers).map(([operationId, handler]) => [
      operationId,
      UNGATED.has(operationId) ? handler : (ctx) => gate.run(actorOf(ctx.request).accountId, () => handler(ctx)),
    ]),
  );
}

/** Request bodies whose rules (and messages) belong to the domain services. */
const DOMAIN_VALIDATED = ['createKey', 'updateKey', 'createSession', 'setGuardrailPolicy', 'setCreditAlerts', 'createWebhook', 'setKeyDefaults'] as const;

export async function installRestControlPlane(server: FastifyInstance, services: ControlPlaneServices, contract: OpenApiContract): Promise<void> {
  await server.register(async (scope) => {
    installRestErrorHandler(scope);
    // JSON only: a text/plain body is a 415, not a string handed to the services.
    scope.removeContentTypeParser('text/plain');
    scope.decorateRequest('actor', null);
    // Before the body is read: a login's body gets the pre-auth allowance (a few KB), every other
    // operation needs a session first, and a caller without one gets its 401 with nothing read.
    scope.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.url === '/api/v1/sessions' && request.method === 'POST') return;
      request.actor = await requiredSession(services.sessions, request, reply);
    });
    mountOperations(scope, {
      contract,
      handlers: gated(
        {
          ...sessionHandlers(services.sessions),
          ...keyHandlers(services.keys, services.rotations, services.audit),
          ...keyDefaultsHandlers(services.accounts),
          ...usageHandlers(services.usage, services.controlPlane),
          ...guardrailHandlers(services.guardrailPolicies),
          ...storedResponsesHandlers(services.storedResponses),
          ...webhookHandlers(services.webhooks),
        },
        services.controlPlane,
      ),
      domainValidatedBodies: DOMAIN_VALIDATED,
      storableBodies: true,
    });
  });
}
