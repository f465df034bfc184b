// One stored usage row as the API shows it. Usage detail and the CSV export
// both map rows here, so the two cannot drift apart field by field.
import type { PriceTier } from '../core/catalog.types';
import { formatMicros } from '../core/decimal';
import { tierTokens, type PriceClass } from './tiers';

export interface UsageItem {
  request_id: string;
  /** The Responses form's `resp_…` id (its stored response, while kept); null for the other forms. */
  response_id: string | null;
  api_key_id: string;
  /** The neutral catalog model. */
  model: string;
  /** The name the caller sent (the neutral name or one of its aliases). */
  requested_model: string;
  routed_model: string | null;
  provider: string | null;
  form: string;
  stream: boolean;
  thinking: boolean;
  status: string;
  /** Some figure is the gateway's local count: the upstream's own usage never arrived. */
  estimated: boolean;
  route_tier: string | null;
  tiers: Record<PriceTier, number>;
  total_tokens: number;
  amount: string;
  created_at: string;
}

/** The columns ITEM_COLUMNS selects, as node-postgres returns them: the item's own fields plus what it is derived from. */
export interface UsageRow extends Omit<UsageItem, 'tiers' | 'amount' | 'created_at'> {
  id: string;
  price_tier: PriceClass;
  tokens_input_cache_hit: number;
  tokens_input_cache_miss: number;
  tokens_output: number;
  amount_micros: number;
  created_at: Date;
}

export function usageItem(r: UsageRow): UsageItem {
  return {
    request_id: r.request_id,
    response_id: r.response_id,
    api_key_id: r.api_key_id,
    model: r.model,
    requested_model: r.requested_model,
    routed_model: r.routed_model,
    provider: r.provider,
    form: r.form,
    stream: r.stream,
    thinking: r.thinking,
    status: r.status,
    estimated: r.estimated,
    route_tier: r.route_tier,
    tiers: tierTokens({
      priceTier: r.price_tier,
      inputCacheHit: r.tokens_input_cache_hit,
      inputCacheMiss: r.tokens_input_cache_miss,
      output: r.tokens_output,
    }),
    total_tokens: r.total_tokens,
    amount: formatMicros(r.amount_micros),
    created_at: r.created_at.toISOString(),
  };
}
