import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { newId } from '../db/ids';

/**
 * The HTTP server: one request id per request (`req_…`), echoed as
 * `request-id` (Anthropic form) and `x-request-id` (OpenAI form) on every
 * reply and bound to every log line of the request.
 */
export function createServer(logger: Logger): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    genReqId: () => newId('req'),
    requestIdLogLabel: 'request_id',
    disableRequestLogging: true,
    bodyLimit: 20 * 1024 * 1024,
    // Official clients add `?beta=true`; routes match on the path only.
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: false,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('request-id', request.id);
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request completed',
    );
  });
  return app;
}
