// From raw upstream tokens to the six billed tiers and the amount of one call
// (docs/architecture.md §7). Pure: the usage recorder stores what these return, and every
// aggregate is a sum of stored results, so reports agree item by item.
import type { UpstreamUsage } from '../core/canonical';
import { PRICE_TIERS, type Decimal, type PriceTier, type UnifyFactors } from '../core/catalog.types';
import { assertTokenCount, mulCeil, toSafeNumber } from '../core/decimal';

/** Which three of the six price tiers bill a call. */
export type PriceClass = 'thinking' | 'no_thinking';

/** Unified tokens of one call, by token kind. */
export interface MeteredTokens {
  priceTier: PriceClass;
  inputCacheHit: number;
  inputCacheMiss: number;
  output: number;
}

export interface TierAmount {
  tokens: number;
  /** Integer micro-units of the account currency. */
  micros: number;
}

export interface CallAmounts {
  tiers: Record<PriceTier, TierAmount>;
  totalTokens: number;
  totalMicros: number;
}

/** The `usage` fields both protocol forms add to a response (identical for both). */
export interface ResponseUsage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  price_tier: PriceClass;
  thinking: boolean;
}

export function priceClassOf(thinking: boolean): PriceClass {
  return thinking ? 'thinking' : 'no_thinking';
}

/**
 * Raw upstream tokens → unified tokens. Each kind is rounded up on its own,
 * once per call: rounding the sum instead would let the split between hit
 * and miss change the bill. Prompt-cache writes are a kind of their own per
 * TTL, converted at what the provider charges for them (the deployment's
 * write factors), and land in the input cache-miss tier (docs/architecture.md §7): the six
 * tiers stay.
 */
export function unifyUsage(usage: UpstreamUsage, unify: UnifyFactors, thinking: boolean): MeteredTokens {
  const write5m = usage.cacheWrite5m ?? 0;
  const write1h = usage.cacheWrite1h ?? 0;
  let inputCacheMiss: number;
  if (write5m === 0 && write1h === 0) inputCacheMiss = mulCeil(usage.inputCacheMiss, unify.input);
  else {
    // Writes beyond the miss count (a malformed report) are still billed as writes, never as less.
    const plain = Math.max(0, usage.inputCacheMiss - write5m - write1h);
    inputCacheMiss =
      mulCeil(plain, unify.input) + mulCeil(write5m, unify.cacheWrite5m ?? unify.input) + mulCeil(write1h, unify.cacheWrite1h ?? unify.input);
  }
  return {
    priceTier: priceClassOf(thinking),
    inputCacheHit: mulCeil(usage.inputCacheHit, unify.cachedInput),
    inputCacheMiss,
    output: mulCeil(usage.output, unify.output),
  };
}

/** Each tier's price class and token kind, split once, and the names its errors use. */
const TIER_PARTS = PRICE_TIERS.map((tier) => {
  const [priceClass, kind] = tier.split('.') as [PriceClass, string];
  const field = ({ input_cache_hit: 'inputCacheHit', input_cache_miss: 'inputCacheMiss', output: 'output' } as const)[kind]!;
  return { tier, priceClass, field, tokensName: `${tier} tokens`, amountName: `amount of ${tier}` };
});

/** Tokens of each of the six tiers; the other price class's three are 0. */
export function tierTokens(tokens: MeteredTokens): Record<PriceTier, number> {
  const counts = {} as Record<PriceTier, number>;
  for (const { tier, priceClass, field } of TIER_PARTS) counts[tier] = priceClass === tokens.priceTier ? tokens[field] : 0;
  return counts;
}

const POWERS_OF_TEN = Array.from({ length: 19 }, (_, scale) => 10n ** BigInt(scale));

/**
 * A price is currency per million tokens, which is the same number as
 * micro-units per token, so a tier's amount is tokens × price in micro-units.
 * With up to 6 price decimals that product can have a fraction of a
 * micro-unit; it is rounded half up to an integer here, once per call and
 * tier, and never again: stored amounts are integers and every report sums
 * them, so a statement equals the sum of its lines exactly. This runs on
 * every call: the three tiers of the other price class cost no arithmetic.
 */
export function priceCall(tokens: MeteredTokens, prices: Record<PriceTier, Decimal>): CallAmounts {
  let totalTokens = 0;
  let totalMicros = 0n;
  const tiers = {} as Record<PriceTier, TierAmount>;
  for (const { tier, priceClass, field, tokensName, amountName } of TIER_PARTS) {
    const price = prices[tier];
    if (price.units < 0n) throw new RangeError(`price of ${tier} must not be negative, got ${price.text}`);
    const count = priceClass === tokens.priceTier ? tokens[field] : 0;
    if (count === 0) {
      tiers[tier] = { tokens: 0, micros: 0 };
      continue;
    }
    assertTokenCount(count, tokensName);
    const exact = BigInt(count) * price.units;
    const denominator = POWERS_OF_TEN[price.scale] ?? 10n ** BigInt(price.scale);
    // floor((2a + b) / 2b) is a/b rounded half up for a ≥ 0.
    const micros = (2n * exact + denominator) / (2n * denominator);
    tiers[tier] = { tokens: count, micros: toSafeNumber(micros, amountName) };
    totalTokens += count;
    totalMicros += micros;
  }
  if (!Number.isSafeInteger(totalTokens)) throw new RangeError(`total tokens ${totalTokens} exceeds the safe integer range`);
  return { tiers, totalTokens, totalMicros: toSafeNumber(totalMicros, 'total amount') };
}

export function responseUsage(tokens: MeteredTokens): ResponseUsage {
  return {
    input_tokens: tokens.inputCacheHit + tokens.inputCacheMiss,
    output_tokens: tokens.output,
    cached_input_tokens: tokens.inputCacheHit,
    price_tier: tokens.priceTier,
    thinking: tokens.priceTier === 'thinking',
  };
}
