import { Readable } from 'node:stream';
import type { OperationHandler } from '../../http/openapi-router';
import { CSV_HEADER, csvRow, type UsageItem, type UsageQueryService } from '../../metering/usage-query.service';
import type { ControlPlaneGate } from '../control-plane-gate';
import { actorOf } from '../request-actor';
import { intParam, stringParam } from './query-params';

/** CSV rows → strings of at most ROWS_PER_PIECE rows: small enough to die young, so a large export stays flat in memory. */
const ROWS_PER_PIECE = 200;
function* pieces(batch: UsageItem[]): Generator<string> {
  for (let i = 0; i < batch.length; i += ROWS_PER_PIECE) yield batch.slice(i, i + ROWS_PER_PIECE).map(csvRow).join('');
}

export function usageHandlers(usage: UsageQueryService, gate: ControlPlaneGate): Record<string, OperationHandler> {
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
      const actor = actorOf(request);
      const rows = usage.exportRows(actor, { start: query.start, end: query.end, ...(apiKeyId ? { apiKeyId } : {}) });
      // Each page is one control-plane operation with a deadline of its own: an export of any length runs, page by page, and waits for its turn in between.
      const nextPage = () => gate.run(actor.accountId, () => rows.next());
      // Pull the first batch before answering so a bad filter is still a clean 400.
      const first = await nextPage();
      async function* csv(): AsyncGenerator<string> {
        yield `${CSV_HEADER.join(',')}\n`;
        if (first.done) return;
        yield* pieces(first.value);
        for (let page = await nextPage(); !page.done; page = await nextPage()) yield* pieces(page.value);
      }
      void reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="usage.csv"');
      // Byte-counted backpressure: at most ~64 KiB waits here for a slow client.
      return reply.send(Readable.from(csv(), { objectMode: false, highWaterMark: 64 * 1024 }));
    },
    getSettlement: async ({ request, params }) => usage.settlement(actorOf(request), params.month!),
    getCreditStatus: async ({ request }) => usage.creditStatus(actorOf(request)),
  };
}



