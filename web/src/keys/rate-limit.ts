// A key's rate limit as the form holds it (one text per budget, empty = no
// limit on it) and as the server takes it (null when every budget is empty).
import type { RateLimitInput } from '../gql/graphql';

export const BUDGETS = ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests'] as const;
export type Budget = (typeof BUDGETS)[number];

/** The server's name of each budget, as an invalid_field error's `field` says it. */
export const BUDGET_FIELDS: Record<Budget, string> = {
  requestsPerMinute: 'rate_limit.requests_per_minute',
  tokensPerMinute: 'rate_limit.tokens_per_minute',
  concurrentRequests: 'rate_limit.concurrent_requests',
};

export type RateLimitTexts = Record<Budget, string>;

type RateLimitValue = { [budget in Budget]?: number | null } | null | undefined;

export const NO_LIMIT_TEXTS: RateLimitTexts = { requestsPerMinute: '', tokensPerMinute: '', concurrentRequests: '' };

export function rateLimitTexts(limit: RateLimitValue): RateLimitTexts {
  const text = (budget: Budget) => (limit?.[budget] == null ? '' : String(limit[budget]));
  return { requestsPerMinute: text('requestsPerMinute'), tokensPerMinute: text('tokensPerMinute'), concurrentRequests: text('concurrentRequests') };
}

/**
 * The input a save sends: null when every field is empty. The inputs (step 1,
 * min 1) let only whole numbers through; the server checks the range and
 * names the budget it refuses.
 */
export function rateLimitInput(texts: RateLimitTexts): RateLimitInput | null {
  const budget = (text: string) => (text.trim() === '' ? null : Number(text.trim()));
  const input = { requestsPerMinute: budget(texts.requestsPerMinute), tokensPerMinute: budget(texts.tokensPerMinute), concurrentRequests: budget(texts.concurrentRequests) };
  return BUDGETS.every((name) => input[name] === null) ? null : input;
}

/** Whether two limits say the same (an all-empty limit is no limit). */
export function sameRateLimit(a: RateLimitValue, b: RateLimitValue): boolean {
  return BUDGETS.every((name) => (a?.[name] ?? null) === (b?.[name] ?? null));
}
