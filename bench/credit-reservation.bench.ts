// What credit admission adds to a call of an account with a limit (issue 16:
// under 30 µs CPU on the hot path): the worst-case estimate (with issue 27's
// scan of the caller's body for what the upstream adds), the reservation
// against this process's lease and its settlement, for every request of the
// routing corpus (chats up to Claude Code agent turns with a 16 kB system
// prompt and tools), each as the Messages body a client would send. The lease
// is granted once up front, as for an account far from its limit; the
// ledger's round trip to PostgreSQL, which such an account pays once per
// heartbeat period, is measured by the paced run with a credit limit in
// `npm run bench` (bench/run.ts).
// Run alone: node --import ./src/compat/node20.mjs --import tsx bench/credit-reservation.bench.ts
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import pino from 'pino';
import { decodeMessagesRequest, type MessagesRequest } from '../src/data-plane/messages/messages.decoder';
import { CreditLedger } from '../src/metering/credit-ledger';
import { worstCase } from '../src/metering/worst-case';
import { toAnthropicRequest } from '../src/providers/anthropic/anthropic-request.mapper';
import { builtinCatalog } from '../src/routing/catalog';
import { loadCorpus, toRequest } from '../scripts/routing-corpus';

const TARGET_US = 30;

/** Answers the ledger's one grow with a large grant (the micro-bench measures the process side only). */
const grantingPool = {
  query: async () => ({ rows: [{ granted: String(Number.MAX_SAFE_INTEGER / 4) }] }),
} as unknown as pg.Pool;

export async function runCreditReservationBench(): Promise<{ p50: number; p95: number; max: number }> {
  const catalog = builtinCatalog({});
  const model = catalog.models[0]!;
  const deployment = model.routes.heavy[0]!;
  // The body a Messages client sends for each corpus request: what the worst case reads.
  const requests = loadCorpus().map((item) => decodeMessagesRequest(toAnthropicRequest(toRequest(item), deployment) as unknown as MessagesRequest));
  const bodies = requests.map((request) => Buffer.byteLength(JSON.stringify(request.source!.body)));
  const ledger = new CreditLedger(grantingPool, { leaseTtlMs: 600_000, logger: pino({ level: 'silent' }) });
  const account = {
    id: 'acc_bench',
    name: 'bench',
    timezone: 'Asia/Shanghai',
    currency: 'CNY',
    creditLimitMicros: Number.MAX_SAFE_INTEGER,
    creditOverflow: 'refuse' as const,
    createdAt: new Date(),
  };
  // The first admission grows the lease; the rest are admitted from it, as on the hot path.
  const first = await ledger.admit({ account, worst: worstCase({ request: requests[0]!, deployments: model.routes.standard, prices: catalog.prices, bodyBytes: bodies[0]!, redactions: 0, thinkingRoute: false }) });
  first.settle();

  const one = (i: number): void => {
    const request = requests[i]!;
    const worst = worstCase({ request, deployments: model.routes.heavy, prices: catalog.prices, bodyBytes: bodies[i]!, redactions: 0, thinkingRoute: false });
    const reservation = ledger.admit({ account, worst });
    if (reservation instanceof Promise) throw new Error('the bench lease should admit locally');
    reservation.settle();
  };
  // Five warm batches; each request's median kept (a batch preempted by other work does not count).
  const batches: number[][] = [];
  for (let batch = 0; batch < 6; batch++) {
    const times: number[] = [];
    for (let i = 0; i < requests.length; i++) {
      const started = process.hrtime.bigint();
      one(i);
      times.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    if (batch > 0) batches.push(times);
  }
  const medians = requests.map((_, i) => batches.map((b) => b[i]!).sort((a, b) => a - b)[2]!).sort((a, b) => a - b);
  const at = (q: number): number => medians[Math.min(medians.length - 1, Math.floor(q * medians.length))]!;
  const result = { p50: at(0.5), p95: at(0.95), max: medians.at(-1)! };
  const verdict = result.p95 <= TARGET_US ? '✔' : '✘';
  process.stdout.write(
    `\nCredit admission per call from the lease (worst case + reserve + settle, ${requests.length} corpus requests, warm): p50 ${result.p50.toFixed(1)} µs, p95 ${result.p95.toFixed(1)} µs ${verdict} (target < ${TARGET_US}), max ${result.max.toFixed(1)} µs; ledger round trips ${ledger.counts.grows}\n`,
  );
  return result;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await runCreditReservationBench();
