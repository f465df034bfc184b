import { expect } from 'chai';
import fc from 'fast-check';
import type { UpstreamUsage } from '../../../src/core/canonical';
import { parseDecimal } from '../../../src/core/decimal';
import { priceCall, responseUsage, unifyUsage, type MeteredTokens } from '../../../src/metering/tiers';
import { PRICE_TIERS, type Decimal, type PriceTier, type UnifyFactors } from '../../../src/core/catalog.types';

const ONE = parseDecimal('1');
const IDENTITY: UnifyFactors = { input: ONE, cachedInput: ONE, output: ONE };

/** The prices of `catalog.example.json` (docs/architecture.md §16.6). */
const PRICES: Record<PriceTier, Decimal> = {
  'no_thinking.input_cache_hit': parseDecimal('0.5'),
  'no_thinking.input_cache_miss': parseDecimal('2'),
  'no_thinking.output': parseDecimal('8'),
  'thinking.input_cache_hit': parseDecimal('1'),
  'thinking.input_cache_miss': parseDecimal('4'),
  'thinking.output': parseDecimal('16'),
};

const uniform = (price: string): Record<PriceTier, Decimal> =>
  Object.fromEntries(PRICE_TIERS.map((tier) => [tier, parseDecimal(price)])) as Record<PriceTier, Decimal>;

const tokens = (overrides: Partial<MeteredTokens>): MeteredTokens => ({
  priceTier: 'no_thinking',
  inputCacheHit: 0,
  inputCacheMiss: 0,
  output: 0,
  ...overrides,
});

const arbTokens = fc.record({
  priceTier: fc.constantFrom('thinking' as const, 'no_thinking' as const),
  inputCacheHit: fc.nat({ max: 50_000_000 }),
  inputCacheMiss: fc.nat({ max: 50_000_000 }),
  output: fc.nat({ max: 50_000_000 }),
});
const arbPrice = fc
  .tuple(fc.nat({ max: 1000 }), fc.nat({ max: 999_999 }))
  .map(([whole, fraction]) => parseDecimal(`${whole}.${fraction.toString().padStart(6, '0')}`));
const arbPrices = fc.tuple(...PRICE_TIERS.map(() => arbPrice)).map(
  (list) => Object.fromEntries(PRICE_TIERS.map((tier, index) => [tier, list[index]!])) as Record<PriceTier, Decimal>,
);
const arbUsage: fc.Arbitrary<UpstreamUsage> = fc.record({
  inputCacheHit: fc.nat({ max: 10_000_000 }),
  inputCacheMiss: fc.nat({ max: 10_000_000 }),
  output: fc.nat({ max: 10_000_000 }),
});

describe('metering tiers', () => {
  describe('unifyUsage', () => {
    it('rounds each token kind up on its own: 3 × 0.25 → 1', () => {
      const quarter = parseDecimal('0.25');
      const metered = unifyUsage({ inputCacheHit: 3, inputCacheMiss: 3, output: 3 }, { input: quarter, cachedInput: quarter, output: quarter }, false);
      expect(metered).to.deep.equal({ priceTier: 'no_thinking', inputCacheHit: 1, inputCacheMiss: 1, output: 1 });
    });

    it('applies the cached-input factor to hits, input to misses, output to output', () => {
      const unify = { input: parseDecimal('2'), cachedInput: parseDecimal('0.5'), output: parseDecimal('3') };
      expect(unifyUsage({ inputCacheHit: 10, inputCacheMiss: 10, output: 10 }, unify, true)).to.deep.equal({
        priceTier: 'thinking',
        inputCacheHit: 5,
        inputCacheMiss: 20,
        output: 30,
      });
    });

    it('converts cache writes at their own factors into the miss tier, each kind rounded up on its own', () => {
      // Anthropic's multipliers on an input factor of 0.5: 5-minute writes 0.625, 1-hour writes 1.
      const unify = { input: parseDecimal('0.5'), cachedInput: parseDecimal('0.5'), output: ONE, cacheWrite5m: parseDecimal('0.625'), cacheWrite1h: ONE };
      const usage = { inputCacheHit: 0, inputCacheMiss: 10 + 3 + 7, output: 1, cacheWrite5m: 3, cacheWrite1h: 7 };
      // ⌈10 × 0.5⌉ + ⌈3 × 0.625⌉ + ⌈7 × 1⌉ = 5 + 2 + 7
      expect(unifyUsage(usage, unify, false)).to.deep.equal({ priceTier: 'no_thinking', inputCacheHit: 0, inputCacheMiss: 14, output: 1 });
    });

    it('bills writes without a factor of their own as plain input, and never less than the writes a malformed report names', () => {
      expect(unifyUsage({ inputCacheHit: 0, inputCacheMiss: 100, output: 0, cacheWrite5m: 60, cacheWrite1h: 40 }, IDENTITY, false).inputCacheMiss).to.equal(100);
      const anthropic = { ...IDENTITY, cacheWrite5m: parseDecimal('1.25'), cacheWrite1h: parseDecimal('2') };
      expect(unifyUsage({ inputCacheHit: 0, inputCacheMiss: 5, output: 0, cacheWrite5m: 8, cacheWrite1h: 0 }, anthropic, false).inputCacheMiss).to.equal(10);
    });

    it('with every factor 1 is the identity', () => {
      fc.assert(
        fc.property(arbUsage, fc.boolean(), (usage, thinking) => {
          expect(unifyUsage(usage, IDENTITY, thinking)).to.deep.equal({ priceTier: thinking ? 'thinking' : 'no_thinking', ...usage });
        }),
      );
    });
  });

  describe('priceCall', () => {
    it('rounds a tier half up once: 3 tokens at 0.5 → 2 micro-units (1.5)', () => {
      const amounts = priceCall(tokens({ inputCacheHit: 3 }), PRICES);
      expect(amounts.tiers['no_thinking.input_cache_hit']).to.deep.equal({ tokens: 3, micros: 2 });
      expect(amounts.totalMicros).to.equal(2);
    });

    it('prices 1 token at "2" per million as 2 micro-units', () => {
      expect(priceCall(tokens({ inputCacheMiss: 1 }), PRICES).tiers['no_thinking.input_cache_miss'].micros).to.equal(2);
    });

    it('rounds below half down: 1 token at 0.4 → 0, 2 tokens at 0.25 → 1 (0.5 up)', () => {
      expect(priceCall(tokens({ output: 1 }), uniform('0.4')).totalMicros).to.equal(0);
      expect(priceCall(tokens({ output: 2 }), uniform('0.25')).totalMicros).to.equal(1);
    });

    it('prices a thinking call only in the thinking tiers', () => {
      const amounts = priceCall(tokens({ priceTier: 'thinking', inputCacheHit: 1000, inputCacheMiss: 2000, output: 500 }), PRICES);
      expect(amounts.tiers['thinking.input_cache_hit']).to.deep.equal({ tokens: 1000, micros: 1000 });
      expect(amounts.tiers['thinking.input_cache_miss']).to.deep.equal({ tokens: 2000, micros: 8000 });
      expect(amounts.tiers['thinking.output']).to.deep.equal({ tokens: 500, micros: 8000 });
      expect(amounts.totalTokens).to.equal(3500);
      expect(amounts.totalMicros).to.equal(17_000);
    });

    it('refuses an amount beyond the safe integer range rather than losing precision', () => {
      expect(() => priceCall(tokens({ output: Number.MAX_SAFE_INTEGER }), uniform('1000'))).to.throw(RangeError);
    });

    it('totals equal the sum of the six tiers, and every amount is an integer', () => {
      fc.assert(
        fc.property(arbTokens, arbPrices, (metered, prices) => {
          const amounts = priceCall(metered, prices);
          const tiers = PRICE_TIERS.map((tier) => amounts.tiers[tier]);
          expect(amounts.totalTokens).to.equal(tiers.reduce((sum, tier) => sum + tier.tokens, 0));
          expect(amounts.totalMicros).to.equal(tiers.reduce((sum, tier) => sum + tier.micros, 0));
          for (const tier of tiers) {
            expect(Number.isSafeInteger(tier.micros) && tier.micros >= 0).to.equal(true);
            expect(Number.isSafeInteger(tier.tokens) && tier.tokens >= 0).to.equal(true);
          }
        }),
      );
    });

    it('each tier amount is tokens × price rounded half up', () => {
      fc.assert(
        fc.property(arbTokens, arbPrices, (metered, prices) => {
          const amounts = priceCall(metered, prices);
          for (const tier of PRICE_TIERS) {
            // Half up: micros − exact ∈ (−½, ½], i.e. −d < 2·micros·d − 2·tokens·units ≤ d.
            const denominator = 10n ** BigInt(prices[tier].scale);
            const gap = 2n * BigInt(amounts.tiers[tier].micros) * denominator - 2n * BigInt(amounts.tiers[tier].tokens) * prices[tier].units;
            expect(gap > -denominator && gap <= denominator).to.equal(true);
          }
        }),
      );
    });

    it('a call of one price tier leaves the other three tiers at zero', () => {
      fc.assert(
        fc.property(arbTokens, arbPrices, (metered, prices) => {
          const amounts = priceCall(metered, prices);
          const other = metered.priceTier === 'thinking' ? 'no_thinking' : 'thinking';
          for (const tier of PRICE_TIERS.filter((name) => name.startsWith(`${other}.`))) {
            expect(amounts.tiers[tier]).to.deep.equal({ tokens: 0, micros: 0 });
          }
          expect(amounts.tiers[`${metered.priceTier}.input_cache_hit`].tokens).to.equal(metered.inputCacheHit);
          expect(amounts.tiers[`${metered.priceTier}.input_cache_miss`].tokens).to.equal(metered.inputCacheMiss);
          expect(amounts.tiers[`${metered.priceTier}.output`].tokens).to.equal(metered.output);
        }),
      );
    });
  });

  describe('responseUsage', () => {
    it('reports all input (hits included), the hit part, and the price tier', () => {
      expect(responseUsage(tokens({ priceTier: 'thinking', inputCacheHit: 40, inputCacheMiss: 60, output: 7 }))).to.deep.equal({
        input_tokens: 100,
        output_tokens: 7,
        cached_input_tokens: 40,
        price_tier: 'thinking',
        thinking: true,
      });
      expect(responseUsage(tokens({ output: 1 }))).to.include({ price_tier: 'no_thinking', thinking: false });
    });
  });
});
