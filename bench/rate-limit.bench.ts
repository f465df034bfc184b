// What per-key rate limits add to a call (issue 31: a few µs, like credit
// admission), and their overshoot across two processes: admission of one
// request, its worst-case tokens and a concurrency slot from this process's
// leases, then settlement and the slot's release, for a key far from its
// limits (its leases granted once up front); then two limiters with their own
// holders and connection pools on one fresh PostgreSQL database, as two
// gateway processes would be, under 200 concurrent calls per budget.
// Run alone: node --import ./src/compat/node20.mjs --import tsx bench/rate-limit.bench.ts
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import pino from 'pino';
import { connectDatabase } from '../src/db/database';
import { AppError } from '../src/errors';
import { RateAdmission, RateLimiter, type RateLimit } from '../src/metering/rate-limiter';
import { scratchDatabase } from '../test/support/db';
import { entities } from '../src/entities';

const TARGET_US = 5;
const CALLS = 200;

/** Answers every grow with a large grant (the micro-bench measures the process side only). */
const grantingPool = {
  query: async () => ({ rows: [{ granted: String(Number.MAX_SAFE_INTEGER / 4), headroom: '0' }] }),
} as unknown as pg.Pool;

export async function runRateLimitBench(): Promise<void> {
  const limiter = new RateLimiter(grantingPool, { leaseTtlMs: 600_000, logger: pino({ level: 'silent' }) });
  const limit: RateLimit = { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000, concurrentRequests: 10_000 };
  const now = Date.now();
  (await limiter.admit('key_bench', limit, 4_000, now)).end();
  const one = (): void => {
    const admission = limiter.admit('key_bench', limit, 4_000, now);
    if (!(admission instanceof RateAdmission)) throw new Error('the bench leases should admit locally');
    admission.headers();
    admission.settleTokens(1_200);
    admission.end();
  };
  // Five warm batches; each call's median across them kept (a batch preempted by other work does not count).
  const batches: number[][] = [];
  for (let batch = 0; batch < 6; batch++) {
    const times: number[] = [];
    for (let i = 0; i < 2_000; i++) {
      const started = process.hrtime.bigint();
      one();
      times.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    if (batch > 0) batches.push(times);
  }
  const samples = batches[0]!.map((_, i) => batches.map((b) => b[i]!).sort((x, y) => x - y)[2]!).sort((x, y) => x - y);
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  const p95 = at(0.95);
  process.stdout.write(
    `\nRate-limit admission per call from the leases (request + worst-case tokens + concurrency slot, headers, settle, release; warm): p50 ${at(0.5).toFixed(2)} µs, p95 ${p95.toFixed(2)} µs ${p95 <= TARGET_US ? '✔' : '✘'} (target < ${TARGET_US}); round trips ${limiter.counts.grows} for 12 001 calls\n`,
  );
  await overshoot();
}

/** Two limiters (own pools, own holders) on one database: 200 calls at once against each kind of limit. */
async function overshoot(): Promise<void> {
  const scratch = await scratchDatabase(`gw_bench_rate_${Date.now().toString(36)}`, process.env.DATABASE_URL);
  const databases = [await connectDatabase(scratch.url, { entities }), await connectDatabase(scratch.url, { entities, migrate: false })];
  const [a, b] = databases.map((db) => new RateLimiter(db.pool, { leaseTtlMs: 15_000, logger: pino({ level: 'silent' }) })) as [RateLimiter, RateLimiter];
  const pick = (i: number): RateLimiter => (i % 2 ? a : b);
  try {
    const now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
    const outcome = async (admission: RateAdmission | Promise<RateAdmission>): Promise<RateAdmission | null> => {
      try {
        return await admission;
      } catch (error) {
        if (error instanceof AppError && error.code === 'rate_limited') return null;
        throw error;
      }
    };
    const rpm = 100;
    const requests = (await Promise.all(Array.from({ length: CALLS }, (_, i) => outcome(pick(i).admit('key_rpm', { requestsPerMinute: rpm, tokensPerMinute: null, concurrentRequests: null }, 0, now))))).filter(Boolean).length;
    const tpm = 20_000;
    const worst = 300;
    const tokens = (await Promise.all(Array.from({ length: CALLS }, (_, i) => outcome(pick(i).admit('key_tpm', { requestsPerMinute: null, tokensPerMinute: tpm, concurrentRequests: null }, worst, now))))).filter(Boolean).length;
    // Concurrency: every call retries after a refusal until it ran; each holds its slot 10 ms. The peak running across both processes is the measure.
    const slots = 10;
    let running = 0;
    let peak = 0;
    let refusals = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CALLS }, async (_, i) => {
        for (;;) {
          const admission = await outcome(pick(i).admit('key_conc', { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: slots }, 0));
          if (admission === null) {
            refusals++;
            await new Promise((r) => setTimeout(r, 5));
            continue;
          }
          peak = Math.max(peak, ++running);
          await new Promise((r) => setTimeout(r, 10));
          running--;
          admission.end();
          return;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const fitTokens = Math.floor(tpm / worst);
    process.stdout.write(
      `Rate limits across two processes on one database, ${CALLS} concurrent calls per budget: ` +
        `requests ${requests} admitted of a limit of ${rpm} (overshoot ${Math.max(0, requests - rpm)}, ${(((requests - rpm) / rpm) * 100).toFixed(1)} %); ` +
        `tokens ${tokens} worst cases of ${worst} admitted where ${fitTokens} fit ${tpm} (overshoot ${Math.max(0, tokens - fitTokens)}); ` +
        `concurrency peak ${peak} running of a limit of ${slots} (overshoot ${Math.max(0, peak - slots)}; all ${CALLS} ran in ${seconds.toFixed(2)} s, ${refusals} refusals retried, ${a.counts.grows + b.counts.grows} round trips in all)\n`,
    );
  } finally {
    await Promise.all([a.close(), b.close()]);
    for (const db of databases.reverse()) await db.close();
    await scratch.dispose();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await runRateLimitBench();
