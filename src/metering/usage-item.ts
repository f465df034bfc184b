// One stored usage row as the API shows it. Usage detail and the CSV export
// both map rows here, so the two cannot drift apart field by field.
import type { components } from '../generated/control';
import { formatMicros } from '../core/decimal';
import { tierTokens, type PriceClass } from './tiers';

/** The contract's usage row (openapi/control.yaml `UsageRecord`): one declaration, generated. */
export type UsageItem = components['schemas']['UsageRecord'];

/** The columns ITEM_COLUMNS selects, as node-postgres returns them: the item's own fields plus what it is derived from. */
export interface UsageRow extends Omit<UsageItem, 'tiers' | 'amount' | 'created_at' | 'form' | 'status'> {
  form: string;
  status: string;
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
    // Written only from the recorder's typed ProtocolForm and UsageStatus, the contract's values.
    form: r.form as UsageItem['form'],
    stream: r.stream,
    thinking: r.thinking,
    status: r.status as UsageItem['status'],
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
