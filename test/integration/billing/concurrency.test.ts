// DESIGN §9: once month-to-date reaches the limit every key answers 429;
// calls already in flight finish, so the overshoot is at most their cost.
// 200 concurrent calls against a limit that fits ~50 of them: measure the
// overshoot, and check that no call that started after the crossing got in.
import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import { api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { allUsageItems, dataCall, micros, shiftDay, zoneDay, type CallSpec } from './billing-support';

const PROMPT: CallSpec = { form: 'messages', stream: false, thinking: false, turns: ['Name three rivers in Europe, briefly.'] };
const VARIANTS: CallSpec[] = [PROMPT, { ...PROMPT, form: 'chat' }, { ...PROMPT, stream: true }, { ...PROMPT, form: 'chat', stream: true }];
const CALLS = 200;
const FIT = 50;

interface Outcome {
  status: number;
  requestId: string | null;
  startedAt: number;
  endedAt: number;
}

describe('billing: credit limit under 200 concurrent calls', function () {
  this.timeout(60_000);
  let t: TestApp;
  let cost: number;

  before(async () => {
    t = await startTestApp();
    const meter = await createAccount(t, { timezone: 'UTC' });
    const key = await createKey(t, meter.token);
    expect((await dataCall(t, key.api_key, PROMPT)).status).to.equal(200);
    cost = Number(micros((await api(t, 'GET', '/api/v1/account/credit', meter.token)).body.month_used));
    expect(cost).to.be.greaterThan(0);
  });
  after(async () => t.close());

  /** Runs CALLS calls over `keys`, call i starting after delay(i) ms; returns the measured figures. */
  async function run(label: string, delay: (i: number) => number) {
    // Room for FIT calls and half of the next: the (FIT+1)-th call crosses.
    const limit = FIT * cost + Math.floor(cost / 2);
    const owner = await createAccount(t, { timezone: 'UTC', creditLimitMicros: limit });
    const keys = [await createKey(t, owner.token), await createKey(t, owner.token), await createKey(t, owner.token)];
    // The crossing as the gateway saw it: the moment its credit monitor learnt
    // of the committed month-to-date reaching the limit (same clock as the client's).
    const { credit } = t.app.services;
    const observe = credit.observe.bind(credit);
    let crossedAt = Infinity;
    credit.observe = (accountId, month, amountMicros) => {
      if (accountId === owner.accountId && amountMicros >= limit && crossedAt === Infinity) crossedAt = performance.now();
      observe(accountId, month, amountMicros);
    };
    const outcomes: Outcome[] = await Promise.all(
      Array.from({ length: CALLS }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, delay(i)));
        const startedAt = performance.now();
        const result = await dataCall(t, keys[i % keys.length].api_key, VARIANTS[i % VARIANTS.length]!);
        return { status: result.status, requestId: result.requestId, startedAt, endedAt: performance.now() };
      }),
    ).finally(() => {
      credit.observe = observe;
    });
    expect(outcomes.filter((o) => o.status !== 200 && o.status !== 429), 'only 200 or 429').to.deep.equal([]);
    const ok = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status === 429);

    // Amounts of the answered calls, from the usage detail (which the credit ledger sums).
    const today = zoneDay('UTC');
    const detail = await allUsageItems(t, owner.token, shiftDay(today, -1), shiftDay(today, 1));
    expect(detail.items).to.have.length(ok.length);
    const amount = new Map(detail.items.map((item) => [item.request_id as string, micros(item.amount)]));
    const maxCost = [...amount.values()].reduce((a, b) => (b > a ? b : a), 0n);
    const used = micros((await api(t, 'GET', '/api/v1/account/credit', owner.token)).body.month_used);
    expect(used, 'ledger = Σ answered calls').to.equal([...amount.values()].reduce((a, b) => a + b, 0n));
    expect(used >= BigInt(limit), 'the limit was reached: no call was refused early').to.equal(true);

    expect(crossedAt, 'the gateway saw the crossing').to.be.lessThan(Infinity);
    const startedAfter = outcomes.filter((o) => o.startedAt > crossedAt);
    expect(startedAfter.filter((o) => o.status !== 429), 'calls started after the crossing that got in').to.deep.equal([]);
    // Answered calls not yet answered at the crossing: they had passed the check before it.
    const inFlight = ok.filter((o) => o.endedAt > crossedAt);
    for (const o of inFlight) expect(o.startedAt).to.be.at.most(crossedAt);
    const latencies = ok.map((o) => o.endedAt - o.startedAt).sort((a, b) => a - b);

    const overshoot = used - BigInt(limit);
    const overshootCalls = Number(overshoot) / cost;
    // Calls answered before the crossing sum to less than the limit (else it would have
    // been crossed earlier), so the overshoot is less than what was in flight.
    expect(overshoot < BigInt(inFlight.length) * maxCost, `overshoot ${overshoot} vs ${inFlight.length} in flight`).to.equal(true);
    expect(overshoot <= BigInt(CALLS) * maxCost).to.equal(true);
    // Afterwards every key is refused.
    for (const key of keys) expect((await dataCall(t, key.api_key, PROMPT)).status).to.equal(429);

    const figures = {
      limit_micros: limit,
      call_cost_micros: cost,
      answered: ok.length,
      refused: refused.length,
      month_used_micros: Number(used),
      overshoot_micros: Number(overshoot),
      overshoot_calls: Number(overshootCalls.toFixed(2)),
      in_flight_at_crossing: inFlight.length,
      started_after_crossing: startedAfter.length,
      answered_latency_ms_p50: Math.round(latencies[Math.floor(latencies.length / 2)]!),
      answered_latency_ms_max: Math.round(latencies.at(-1)!),
    };
    process.stdout.write(`      ${label}: ${JSON.stringify(figures)}\n`);
    return figures;
  }

  it('staggered over ~3 s: overshoot < the calls in flight at the crossing; every later call refused', async () => {
    // ~67 calls/s: the limit is crossed around the first second, with calls still arriving.
    const figures = await run('staggered', () => Math.random() * 3000);
    expect(figures.started_after_crossing).to.be.greaterThan(0);
    expect(figures.refused).to.be.greaterThan(0);
  });

  it('all 200 at once: the overshoot stays within the cost of the calls in flight', async () => {
    await run('burst', () => 0);
  });
});
