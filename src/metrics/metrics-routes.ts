import type { FastifyInstance } from 'fastify';
import { formOfPath, type GatewayMetrics } from './gateway-metrics';

/**
 * GET /metrics (Prometheus text format) and the per-request counters of the
 * data plane. `text` is the registry's own output, or in cluster mode the
 * primary's sum over every worker.
 */
export function installMetrics(server: FastifyInstance, metrics: GatewayMetrics, text: () => Promise<string>): void {
  server.addHook('onResponse', (request, reply, done) => {
    const form = formOfPath(request.url);
    if (form !== undefined) {
      const body = request.body as { model?: unknown } | null | undefined;
      metrics.request(form, typeof body === 'object' && body !== null ? body.model : undefined, reply.statusCode, reply.elapsedTime / 1000);
    }
    done();
  });
  server.get('/metrics', async (_request, reply) => reply.header('content-type', metrics.registry.contentType).send(await text()));
}
