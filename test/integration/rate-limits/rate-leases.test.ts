// Per-key rate limits held across processes (issue 31): two limiters with
// their own holders on one PostgreSQL stand for two gateway processes; 200
// calls at once split between them never pass a key's limit.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import pino from 'pino';
import { RateAdmission, RateLimiter, type RateLimit } from '../../../src/metering/rate-limiter';
import { AppError } from '../../../src/errors';
import { testDatabase } from '../../support/db';

const NONE: RateLimit = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null };
const newKey = (): string => `key_rl_${randomBytes(6).toString('hex')}`;

/** The middle of the current UTC minute, so a test's calls all fall in one window. */
function midMinute(): number {
  const now = Date.now();
  return Math.floor(now / 60_000) * 60_000 + 30_000;
}

async function settle(calls: Array<RateAdmission | Promise<RateAdmission>>): Promise<{ admitted: RateAdmission[]; refused: AppError[] }> {
  const admitted: RateAdmission[] = [];
  const refused: AppError[] = [];
  for (const outcome of await Promise.allSettled(calls.map(async (c) => c))) {
    if (outcome.status === 'fulfilled') admitted.push(outcome.value);
    else if (outcome.reason instanceof AppError) refused.push(outcome.reason);
    else throw outcome.reason;
  }
  return { admitted, refused };
}

describe('rate limits: leases shared by two processes on one database', function () {
  this.timeout(60_000);
  let limiters: RateLimiter[] = [];

  const twoProcesses = async (ttlMs = 15_000): Promise<[RateLimiter, RateLimiter]> => {
    const db = await testDatabase();
    const make = () => new RateLimiter(db.pool, { leaseTtlMs: ttlMs, logger: pino({ level: 'silent' }) });
    const pair: [RateLimiter, RateLimiter] = [make(), make()];
    limiters.push(...pair);
    return pair;
  };
  afterEach(async () => {
    await Promise.all(limiters.map((l) => l.close()));
    limiters = [];
  });

  it('requests per minute: 200 calls at once across two processes admit exactly the limit, refusals are 429 rate_limited with the headers SDKs read', async () => {
    const [a, b] = await twoProcesses();
    const key = newKey();
    const limit = { ...NONE, requestsPerMinute: 50 };
    const now = midMinute();
    const { admitted, refused } = await settle(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).admit(key, limit, 0, now)));
    expect(admitted.length, 'overshoot').to.be.at.most(50);
    expect(admitted.length, 'under-admission').to.equal(50);
    expect(refused).to.have.length(150);
    const refusal = refused[0]!;
    expect(refusal.status).to.equal(429);
    expect(refusal.code).to.equal('rate_limited');
    expect(refusal.headers['retry-after']).to.equal('30');
    expect(refusal.headers['x-should-retry']).to.equal('true');
    expect(refusal.headers['x-ratelimit-limit-requests']).to.equal('50');
    expect(refusal.headers['x-ratelimit-remaining-requests']).to.equal('0');
    expect(refusal.headers['x-ratelimit-reset-requests']).to.equal('30s');
    // The next minute is a new budget.
    await a.admit(key, limit, 0, now + 60_000);
  });

  it('far from the limit, admission needs no round trip after the first grant', async () => {
    const [a] = await twoProcesses();
    const key = newKey();
    const limit = { requestsPerMinute: 100_000, tokensPerMinute: 10_000_000, concurrentRequests: 1_000 };
    const now = midMinute();
    const first = await a.admit(key, limit, 2_000, now);
    first.settleTokens(1_000);
    first.end();
    const grows = a.counts.grows;
    for (let i = 0; i < 100; i++) {
      const admission = a.admit(key, limit, 2_000, now);
      expect(admission).to.be.instanceOf(RateAdmission);
      (admission as RateAdmission).settleTokens(500);
      (admission as RateAdmission).end();
    }
    expect(a.counts.grows).to.equal(grows);
    const headers = first.headers();
    expect(headers['x-ratelimit-limit-tokens']).to.equal('10000000');
    expect(Number(headers['x-ratelimit-remaining-requests'])).to.be.within(99_000, 100_000);
  });

  it('tokens per minute: the worst case is taken at admission across both processes, and what a call did not use is budget again', async () => {
    const [a, b] = await twoProcesses();
    const key = newKey();
    const limit = { ...NONE, tokensPerMinute: 10_000 };
    const now = midMinute();
    const { admitted, refused } = await settle(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).admit(key, limit, 300, now)));
    // 33 worst cases of 300 fit in 10 000; the 34th would pass the limit.
    expect(admitted.length, 'overshoot').to.be.at.most(33);
    expect(admitted.length).to.equal(33);
    expect(refused[0]!.headers['x-ratelimit-limit-tokens']).to.equal('10000');
    expect(refused[0]!.message).to.contain('10000 tokens per minute');
    // Ten calls used 100 of their 300 each: 2 000 tokens are budget again, for the other process too (near the limit, at once).
    for (const admission of admitted.slice(0, 10)) admission.settleTokens(100);
    await new Promise((r) => setTimeout(r, 100));
    const again = await settle(Array.from({ length: 20 }, () => b.admit(key, limit, 300, now)));
    expect(again.admitted.length).to.be.within(6, 7);
    const { rows } = await (await testDatabase()).pool.query<{ n: string }>(`select sum(amount)::text as n from rate_leases where key_id = $1 and kind = 'tokens'`, [key]);
    expect(Number(rows[0]!.n)).to.be.at.most(10_000);
  });

  it('concurrent requests: never more running than the limit across both processes; a slot that ends is the other process’s at once', async () => {
    const [a, b] = await twoProcesses();
    const key = newKey();
    const limit = { ...NONE, concurrentRequests: 5 };
    const { admitted, refused } = await settle(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).admit(key, limit, 0)));
    expect(admitted).to.have.length(5);
    expect(refused[0]!.headers['retry-after']).to.equal('1');
    expect(refused[0]!.headers['x-should-retry']).to.equal('true');
    // Which process holds the slots does not matter: one ends, and either process may start a call.
    admitted[0]!.end();
    admitted[0]!.end();
    await new Promise((r) => setTimeout(r, 100));
    const next = await settle([a.admit(key, limit, 0), b.admit(key, limit, 0)]);
    expect(next.admitted).to.have.length(1);
    for (const admission of [...admitted, ...next.admitted]) admission.end();
  });

  it('a key without limits takes nothing and never touches the database', async () => {
    const [a] = await twoProcesses();
    const admission = a.admit(newKey(), NONE, 5_000);
    expect(admission).to.be.instanceOf(RateAdmission);
    expect((admission as RateAdmission).headers()).to.deep.equal({});
    expect(a.counts.grows).to.equal(0);
  });

  it('a refused budget gives back what the others took for the call', async () => {
    const [a] = await twoProcesses();
    const key = newKey();
    const limit = { requestsPerMinute: 10, tokensPerMinute: 1_000, concurrentRequests: null };
    const now = midMinute();
    // Too many tokens: refused on tokens, and the request it took is not spent.
    const refused = await settle([a.admit(key, limit, 5_000, now)]);
    expect(refused.refused[0]!.message).to.contain('tokens per minute');
    const { admitted } = await settle(Array.from({ length: 20 }, () => a.admit(key, limit, 10, now)));
    expect(admitted).to.have.length(10);
  });

  it('a process that dies holding concurrency slots stops counting after the lease TTL', async () => {
    const [a, b] = await twoProcesses(600);
    const key = newKey();
    const limit = { ...NONE, concurrentRequests: 2 };
    await settle([a.admit(key, limit, 0), a.admit(key, limit, 0)]);
    // `a` stops beating (as after kill -9): its slots still count at once...
    expect((await settle([b.admit(key, limit, 0)])).refused).to.have.length(1);
    limiters = limiters.filter((l) => l !== a);
    await new Promise((r) => setTimeout(r, 700));
    // ...and not after the TTL.
    b.start();
    const later = await settle([b.admit(key, limit, 0), b.admit(key, limit, 0)]);
    expect(later.admitted).to.have.length(2);
    for (const admission of later.admitted) admission.end();
  });
});
