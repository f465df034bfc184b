import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app';
import { mountOperations, type OpenApiContract } from '../../http/openapi-router';
import { guardrailHandlers } from './guardrail.handlers';
import { keyHandlers, sessionHandlers } from './key.handlers';
import { installRestErrorHandler } from './rest-errors';
import { storedResponsesHandlers } from './stored-responses.handlers';
import { usageHandlers } from './usage.handlers';

/** Request bodies whose rules (and messages) belong to the domain services. */
const DOMAIN_VALIDATED = ['createKey', 'updateKey', 'createSession', 'setGuardrailPolicy'] as const;

export async function installRestControlPlane(server: FastifyInstance, services: Services, contract: OpenApiContract): Promise<void> {
  await server.register(async (scope) => {
    installRestErrorHandler(scope);
    // JSON only: a text/plain body is a 415, not a string handed to the services.
    scope.removeContentTypeParser('text/plain');
    scope.decorateRequest('actor', null);
    scope.addHook('preHandler', async (request) => {
      if (request.routeOptions.url === '/api/v1/sessions' && request.method === 'POST') return;
      request.actor = await services.sessions.authenticate(request.headers.authorization, request.ip);
    });
    mountOperations(scope, {
      contract,
      handlers: {
        ...sessionHandlers(services.sessions),
        ...keyHandlers(services.keys, services.audit),
        ...usageHandlers(services.usage),
        ...guardrailHandlers(services.guardrailPolicies),
        ...storedResponsesHandlers(services.storedResponses),
      },
      domainValidatedBodies: DOMAIN_VALIDATED,
      storableBodies: true,
    });
  });
}
