import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../http/bearer';
import type { GatewayMetrics } from './gateway-metrics';

/** Whether `authorization` is `Bearer <token>`, compared in constant time. */
function bearerMatches(authorization: string | undefined, token: string): boolean {
  const presented = Buffer.from(bearerToken(authorization) ?? '');
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/**
 * GET /metrics (Prometheus text format) and the per-request counters of the
 * data plane. `text` is the registry's own output, or in cluster mode the
 * primary's sum over every worker. With `token` set (GATEWAY_METRICS_TOKEN)
 * a scrape must send `Authorization: Bearer <token>`, else 401.
 */
export function installMetrics(server: FastifyInstance, metrics: GatewayMetrics, text: () => Promise<string>, token?: string): void {
  server.addHook('onResponse', (request, reply, done) => {
    metrics.dataPlaneResponse(request.url, request.body, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  server.get('/metrics', async (request, reply) => {
    if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
      return reply.code(401).header('www-authenticate', 'Bearer').send({ error: { code: 'missing_metrics_token', message: 'GET /metrics needs Authorization: Bearer <GATEWAY_METRICS_TOKEN>' } });
    }
    return reply.header('content-type', metrics.registry.contentType).send(await text());
  });
}
