// The Fastify adapter of the data-plane lifecycle (lifecycle.ts): the odd
// cases the fast path leaves to Fastify (chunked, empty, oversized or
// non-JSON bodies, paths with parameters, GETs and DELETEs, a closing
// server), and every request `inject()` sends. Fastify's own steps stand in
// for the fast path's: its request id, body parser and access log (the
// server's, src/http/server.ts), its router and hooks.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { KEYED_BODY } from '../../http/body-allowance';
import type { HttpDrain } from '../../http/drain';
import type { AuthenticatedKey } from '../key-auth';
import type { DataPlaneLifecycle } from './lifecycle';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
    /** The server's drain, so a call can be cut when the shutdown grace period runs out. */
    readonly drain: HttpDrain | null;
  }
}

export interface DataPlaneScopeDeps {
  lifecycle: DataPlaneLifecycle;
  drain: HttpDrain;
}

export async function installDataPlane(server: FastifyInstance, { lifecycle, drain }: DataPlaneScopeDeps): Promise<void> {
  await server.register(async (scope) => {
    scope.decorateRequest('apiKey', null);
    // The data plane speaks JSON only: a text/plain body is a 415, not a string handed to the decoders.
    scope.removeContentTypeParser('text/plain');
    scope.decorateRequest('drain', { getter: () => drain });
    // The key step comes before the body is read (chunked bodies come this way).
    scope.addHook('onRequest', async (request, reply) => {
      request.apiKey = await lifecycle.authenticate(request.headers).catch((error: unknown) => {
        void reply.header('connection', 'close');
        throw error;
      });
      request.bodyAllowance = KEYED_BODY;
    });
    for (const route of lifecycle.routes) {
      scope.route({
        method: route.method as HTTPMethods,
        url: route.path.replace(/\{([^}]+)\}/g, ':$1'),
        handler: async (request, reply) => {
          const params = (request.params ?? {}) as Record<string, string>;
          const query = { ...((request.query ?? {}) as Record<string, string | string[]>) };
          await lifecycle.answer(route, request, reply, params, query);
          return reply;
        },
        // Every failure of the route (its hooks, body parser and handler) answers in its own form.
        errorHandler: (error, request: FastifyRequest, reply: FastifyReply) => lifecycle.fail(route, request, reply, error, request.log),
      });
    }
  });
}
