import { Readable } from 'node:stream';
import type { OperationHandler } from '../../http/openapi-router';
import { CSV_HEADER, csvRow, type UsageQueryService } from '../../metering/usage-query.service';
import { actorOf } from './key.handlers';
import { intParam, stringParam } from './query-params';

export function usageHandlers(usage: UsageQueryService): Record<string, OperationHandler> {
  return {
    getKeyUsage: async ({ request, params, query }) => usage.keyUsage(actorOf(request), params.api_key_id!, query.start, query.end),
    listUsage: async ({ request, query }) => {
      const apiKeyId = stringParam(query, 'api_key_id', 40);
      const model = stringParam(query, 'model', 128);
      return usage.listUsage(
        actorOf(request),
        { start: query.start, end: query.end, ...(apiKeyId ? { apiKeyId } : {}), ...(model ? { model } : {}) },
        intParam(query, 'page', 1, 1, 1_000_000),
        intParam(query, 'page_size', 50, 1, 500),
      );
    },
    exportUsage: async ({ request, reply, query }) => {
      const apiKeyId = stringParam(query, 'api_key_id', 40);
      const rows = usage.exportRows(actorOf(request), { start: query.start, end: query.end, ...(apiKeyId ? { apiKeyId } : {}) });
      // Pull the first batch before answering so a bad filter is still a clean 400.
      const first = await rows.next();
      async function* csv(): AsyncGenerator<string> {
        yield `${CSV_HEADER.join(',')}\n`;
        if (first.done) return;
        yield first.value.map(csvRow).join('');
        for await (const batch of rows) yield batch.map(csvRow).join('');
      }
      void reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="usage.csv"');
      return reply.send(Readable.from(csv()));
    },
    getSettlement: async ({ request, params }) => usage.settlement(actorOf(request), params.month!),
    getCreditStatus: async ({ request }) => usage.creditStatus(actorOf(request)),
  };
}



