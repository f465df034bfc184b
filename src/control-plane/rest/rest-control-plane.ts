import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app';
import { mountOperations, type OpenApiContract } from '../../http/openapi-router';
import { requiredSession } from '../session-first';
import { guardrailHandlers } from './guardrail.handlers';
import { keyHandlers, sessionHandlers } from './key.handlers';
import { installRestErrorHandler } from './rest-errors';
import { usageHandlers } from './usage.handlers';

/** Request bodies whose rules (and messages) belong to the domain services. */
const DOMAIN_VALIDATED = ['createKey', 'updateKey', 'createSession', 'setGuardrailPolicy'] as const;

export async function installRestControlPlane(server: FastifyInstance, services: Services, contract: OpenApiContract): Promise<void> {
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
      handlers: {
        ...sessionHandlers(services.sessions),
        ...keyHandlers(services.keys, services.audit),
        ...usageHandlers(services.usage),
        ...guardrailHandlers(services.guardrailPolicies),
      },
      domainValidatedBodies: DOMAIN_VALIDATED,
      storableBodies: true,
    });
  });
}
