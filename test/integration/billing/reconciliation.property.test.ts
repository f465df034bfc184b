// Spec §1 / docs/architecture.md §7: per-key usage, the usage detail and the settlement
// statement agree item by item, exactly to the micro-unit, and Σ keys = the
// account total — checked on random traffic over several keys, both protocol
// forms, thinking and not, cache hits and misses, plain and streamed.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { zoneMonth } from '../../../src/domain/zone-time';
import { api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { allUsageItems, dataCall, micros, PRICE_TIERS, shiftDay, tierMicros, zoneDay, type CallSpec, type PriceTier, type SeenUsage } from './billing-support';

/** Multi-turn conversations: sending one twice makes its prefix a cache hit the second time. */
const CONVERSATIONS: string[][] = [
  ['Tell me a short fact about lighthouses.'],
  ['Summarise the plot of a heist film.', 'A crew plans and executes a robbery.', 'Now give it a twist ending.'],
  ['What is a prime number?', 'A number divisible only by one and itself.', 'List three of them.', 'Two, three and five.', 'And the next one?'],
  ['Hello there', 'Hi! How can I help?', 'Explain caching in one sentence.'],
];

interface PlannedCall {
  key: number;
  form: 'messages' | 'chat';
  stream: boolean;
  thinking: boolean;
  conversation: number;
  /** Make the conversation unique to this run, so its first send is a miss. */
  fresh: boolean;
  sends: number;
}

const plannedCall: fc.Arbitrary<PlannedCall> = fc.record({
  key: fc.nat(3),
  form: fc.constantFrom('messages' as const, 'chat' as const),
  stream: fc.boolean(),
  thinking: fc.boolean(),
  conversation: fc.nat(CONVERSATIONS.length - 1),
  fresh: fc.boolean(),
  sends: fc.integer({ min: 1, max: 2 }),
});

const plan = fc.record({
  keys: fc.integer({ min: 2, max: 4 }),
  timezone: fc.constantFrom('UTC', 'Asia/Shanghai', 'America/Los_Angeles'),
  calls: fc.array(plannedCall, { minLength: 3, maxLength: 7 }),
});

interface Sent {
  keyId: string;
  spec: CallSpec;
  requestId: string;
  seen: SeenUsage;
}

type TierSums = Record<PriceTier, { tokens: number; micros: bigint }>;
const emptyTiers = (): TierSums => Object.fromEntries(PRICE_TIERS.map((t) => [t, { tokens: 0, micros: 0n }])) as TierSums;

describe('billing reconciliation (property: per-key usage = usage detail = settlement, to the micro-unit)', function () {
  this.timeout(120_000);
  let t: TestApp;
  const coverage = { calls: 0, hits: 0, misses: 0, thinking: 0, plain: 0, streamed: 0, messages: 0, chat: 0 };

  before(async () => {
    t = await startTestApp();
  });
  after(async () => t.close());

  it('agrees item by item on random traffic over 2–4 keys (20 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(plan, async ({ keys: keyCount, timezone, calls }) => {
        const owner = await createAccount(t, { timezone });
        const keys: Array<{ id: string; secret: string }> = [];
        for (let i = 0; i < keyCount; i++) {
          const created = await createKey(t, owner.token);
          keys.push({ id: created.api_key_id, secret: created.api_key });
        }
        const runTag = randomBytes(4).toString('hex');
        const monthsSeen = new Set([zoneMonth(timezone)]);
        const sent: Sent[] = [];
        // Each round sends its calls concurrently; a call's second send is in
        // the next round, after its first reply primed the prefix cache.
        for (let round = 0; round < 2; round++) {
          await Promise.all(
            calls
              .filter((call) => call.sends > round)
              .map(async (call) => {
                const key = keys[call.key % keyCount]!;
                const turns = [...CONVERSATIONS[call.conversation]!];
                if (call.fresh) turns[0] = `${turns[0]} (run ${runTag})`;
                const spec: CallSpec = { form: call.form, stream: call.stream, thinking: call.thinking, turns };
                const result = await dataCall(t, key.secret, spec);
                expect(result.status, JSON.stringify(result.body)).to.equal(200);
                expect(result.requestId, 'request-id header').to.be.a('string');
                expect(result.usage, 'usage in the response').to.not.equal(null);
                sent.push({ keyId: key.id, spec, requestId: result.requestId!, seen: result.usage! });
              }),
          );
        }
        monthsSeen.add(zoneMonth(timezone));

        const today = zoneDay(timezone);
        const start = shiftDay(today, -1);
        const end = shiftDay(today, 1);

        // The usage detail: one item per call, matching what each client saw.
        const detail = await allUsageItems(t, owner.token, start, end);
        expect(detail.items).to.have.length(sent.length);
        expect(detail.first.total).to.equal(sent.length);
        const byRequest = new Map(detail.items.map((item) => [item.request_id, item]));
        expect(byRequest.size).to.equal(sent.length);
        for (const s of sent) {
          const item = byRequest.get(s.requestId);
          expect(item, `usage item for ${s.requestId}`).to.not.equal(undefined);
          const priceClass = s.spec.thinking ? 'thinking' : 'no_thinking';
          expect(item).to.include({ api_key_id: s.keyId, status: 'ok', stream: s.spec.stream, thinking: s.spec.thinking });
          expect(item.form).to.equal(s.spec.form === 'messages' ? 'messages' : 'chat_completions');
          expect(s.seen.thinking).to.equal(s.spec.thinking);
          expect(item.tiers[`${priceClass}.input_cache_hit`]).to.equal(s.seen.cached);
          expect(item.tiers[`${priceClass}.input_cache_miss`]).to.equal(s.seen.input - s.seen.cached);
          expect(item.tiers[`${priceClass}.output`]).to.equal(s.seen.output);
          expect(item.total_tokens).to.equal(s.seen.input + s.seen.output);
          coverage.calls++;
          if (s.seen.cached > 0) coverage.hits++;
          if (s.seen.input > s.seen.cached) coverage.misses++;
          if (s.spec.thinking) coverage.thinking++;
          if (s.spec.stream) coverage.streamed++;
          else coverage.plain++;
          coverage[s.spec.form]++;
        }

        // Settlement(s) of the month(s) the run touched, summed per key per tier.
        const settlementKeys = new Map<string, { tiers: TierSums; tokens: number; micros: bigint }>();
        let settlementTokens = 0;
        let settlementMicros = 0n;
        for (const month of monthsSeen) {
          const settlement = await api(t, 'GET', `/api/v1/settlements/${month}`, owner.token);
          expect(settlement.status).to.equal(200);
          expect(settlement.body.status).to.equal('open');
          let keyTokens = 0;
          let keyMicros = 0n;
          for (const line of settlement.body.keys) {
            const entry = settlementKeys.get(line.api_key_id) ?? { tiers: emptyTiers(), tokens: 0, micros: 0n };
            expect(line.tiers.map((l: any) => l.tier)).to.deep.equal([...PRICE_TIERS]);
            let lineMicros = 0n;
            for (const l of line.tiers) {
              entry.tiers[l.tier as PriceTier].tokens += l.tokens;
              entry.tiers[l.tier as PriceTier].micros += micros(l.amount);
              lineMicros += micros(l.amount);
            }
            expect(lineMicros, 'a key line = Σ its tiers').to.equal(micros(line.total_amount));
            entry.tokens += line.total_tokens;
            entry.micros += micros(line.total_amount);
            keyTokens += line.total_tokens;
            keyMicros += micros(line.total_amount);
            settlementKeys.set(line.api_key_id, entry);
          }
          expect(keyTokens, 'Σ keys = settlement total tokens').to.equal(settlement.body.total_tokens);
          expect(keyMicros, 'Σ keys = settlement total amount').to.equal(micros(settlement.body.total_amount));
          settlementTokens += settlement.body.total_tokens;
          settlementMicros += micros(settlement.body.total_amount);
        }

        let keyTokensTotal = 0;
        let keyMicrosTotal = 0n;
        const keyList = await api(t, 'GET', '/api/v1/keys?page_size=100', owner.token);
        for (const key of keys) {
          const mine = sent.filter((s) => s.keyId === key.id);
          const items = detail.items.filter((item) => item.api_key_id === key.id);
          const usage = await api(t, 'GET', `/api/v1/keys/${key.id}/usage?start=${start}&end=${end}`, owner.token);
          expect(usage.status).to.equal(200);
          const u = usage.body;
          expect(u.calls, 'calls = requests made').to.equal(mine.length);
          expect(items).to.have.length(mine.length);
          expect(u.total_tokens, 'per-key tokens = Σ usage the client saw').to.equal(mine.reduce((n, s) => n + s.seen.input + s.seen.output, 0));

          // The usage detail per tier: tokens summed, amounts re-priced per call and tier.
          const fromDetail = emptyTiers();
          for (const item of items) {
            for (const tier of PRICE_TIERS) {
              const unitPrice = u.tiers.find((l: any) => l.tier === tier).unit_price as string;
              fromDetail[tier].tokens += item.tiers[tier];
              fromDetail[tier].micros += tierMicros(item.tiers[tier], unitPrice);
            }
          }
          const detailMicros = items.reduce((sum, item) => sum + micros(item.amount), 0n);
          const settled = settlementKeys.get(key.id) ?? { tiers: emptyTiers(), tokens: 0, micros: 0n };
          expect(u.tiers.map((l: any) => l.tier)).to.deep.equal([...PRICE_TIERS]);
          for (const line of u.tiers) {
            const tier = line.tier as PriceTier;
            expect(line.tokens, `${tier} tokens: usage = detail`).to.equal(fromDetail[tier].tokens);
            expect(line.tokens, `${tier} tokens: usage = settlement`).to.equal(settled.tiers[tier].tokens);
            expect(micros(line.amount), `${tier} amount: usage = detail`).to.equal(fromDetail[tier].micros);
            expect(micros(line.amount), `${tier} amount: usage = settlement`).to.equal(settled.tiers[tier].micros);
          }
          expect(micros(u.total_amount), 'key total: usage = Σ detail amounts').to.equal(detailMicros);
          expect(micros(u.total_amount), 'key total: usage = settlement').to.equal(settled.micros);
          expect(u.total_tokens).to.equal(settled.tokens);

          // The detail filtered by key says the same.
          const filtered = await allUsageItems(t, owner.token, start, end, key.id);
          expect(filtered.first.total).to.equal(mine.length);
          expect(filtered.first.total_tokens).to.equal(u.total_tokens);
          expect(micros(filtered.first.total_amount)).to.equal(micros(u.total_amount));

          // The key's lifetime used_tokens is the same sum (fresh keys).
          const listed = keyList.body.items.find((k: any) => k.api_key_id === key.id);
          expect(listed.used_tokens).to.equal(u.total_tokens);

          keyTokensTotal += u.total_tokens;
          keyMicrosTotal += micros(u.total_amount);
        }

        // Σ keys = the account total, in settlement and in the usage detail.
        expect(keyTokensTotal).to.equal(settlementTokens);
        expect(keyMicrosTotal).to.equal(settlementMicros);
        expect(keyTokensTotal).to.equal(detail.first.total_tokens);
        expect(keyMicrosTotal).to.equal(micros(detail.first.total_amount));

        // The credit ledger is the same sum of stored call amounts.
        if (monthsSeen.size === 1) {
          const credit = await api(t, 'GET', '/api/v1/account/credit', owner.token);
          expect(micros(credit.body.month_used)).to.equal(keyMicrosTotal);
        }
      }),
      { numRuns: 20 },
    );
    process.stdout.write(`      reconciliation coverage: ${JSON.stringify(coverage)}\n`);
    // The runs covered every axis the property is about.
    for (const [axis, n] of Object.entries(coverage)) expect(n, `calls with ${axis}`).to.be.greaterThan(0);
  });
});
