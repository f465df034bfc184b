import { PRICE_TIERS } from '../../../core/catalog.types';
import type { CreditStatus, KeyUsage, Settlement, TierLine, UsageItem, UsageList } from '../../../metering/usage-query.service';
import type { CreditStatusType } from './credit-status.type';
import type { SettlementType } from './settlement.type';
import type { KeyUsageType, TierLineType, UsageRecordPageType, UsageRecordType } from './usage.type';

const tierLine = (line: TierLine): TierLineType => ({ tier: line.tier, tokens: line.tokens, unitPrice: line.unit_price, amount: line.amount });

export function toKeyUsageType(usage: KeyUsage): KeyUsageType {
  return {
    apiKeyId: usage.api_key_id,
    start: usage.start,
    end: usage.end,
    currency: usage.currency,
    calls: usage.calls,
    tiers: usage.tiers.map(tierLine),
    totalTokens: usage.total_tokens,
    totalAmount: usage.total_amount,
  };
}

function usageRecord(item: UsageItem): UsageRecordType {
  return {
    requestId: item.request_id,
    responseId: item.response_id,
    apiKeyId: item.api_key_id,
    model: item.model,
    requestedModel: item.requested_model,
    routedModel: item.routed_model,
    provider: item.provider,
    form: item.form,
    stream: item.stream,
    thinking: item.thinking,
    status: item.status,
    estimated: item.estimated,
    routeTier: item.route_tier,
    tiers: PRICE_TIERS.map((tier) => ({ tier, tokens: item.tiers[tier] })),
    totalTokens: item.total_tokens,
    amount: item.amount,
    createdAt: item.created_at,
  };
}

export function toUsageRecordPageType(page: UsageList): UsageRecordPageType {
  return {
    total: page.total,
    page: page.page,
    pageSize: page.page_size,
    totalTokens: page.total_tokens,
    totalAmount: page.total_amount,
    items: page.items.map(usageRecord),
  };
}

export function toSettlementType(settlement: Settlement): SettlementType {
  return {
    month: settlement.month,
    currency: settlement.currency,
    status: settlement.status,
    closedAt: settlement.closed_at,
    keys: settlement.keys.map((k) => ({
      apiKeyId: k.api_key_id,
      name: k.name,
      dimension: k.dimension,
      tiers: k.tiers.map(tierLine),
      totalTokens: k.total_tokens,
      totalAmount: k.total_amount,
    })),
    totalTokens: settlement.total_tokens,
    totalAmount: settlement.total_amount,
  };
}

export function toCreditStatusType(status: CreditStatus): CreditStatusType {
  return {
    creditLimit: status.credit_limit,
    currency: status.currency,
    month: status.month,
    monthUsed: status.month_used,
    reserved: status.reserved,
    remaining: status.remaining,
    suspended: status.suspended,
    overflow: status.overflow,
  };
}
