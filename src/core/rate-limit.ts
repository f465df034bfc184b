// A key's rate limit (docs/architecture.md §18): what the key resource says
// (`rate_limit: {requests_per_minute, tokens_per_minute, concurrent_requests} | null`)
// and how it is stored (api_keys.rate_limit, accounts.key_rate_limit: the
// same JSON), read by the control plane, the data plane and the limiter.
import { invalid } from '../errors';

/** The wire and stored form; a null budget is unlimited. */
export interface RateLimitJson {
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  concurrent_requests: number | null;
}

/** The limiter's form. */
export interface RateLimit {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
}

const BUDGETS = ['requests_per_minute', 'tokens_per_minute', 'concurrent_requests'] as const;
/** The largest a budget may be: past any real use, and far inside exact integers and the rows' bigint. */
const MAX_BUDGET = 1e12;

/**
 * Checks `value` as a `rate_limit` field (`field` names it in the 400):
 * null, or an object of the three budgets, each a positive integer or null
 * (absent = null). An object with every budget null is no limit: null.
 */
export function parseRateLimit(value: unknown, field = 'rate_limit'): RateLimitJson | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(field, `${field} must be null (no limit) or an object with ${BUDGETS.join(', ')}`);
  }
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    if (!(BUDGETS as readonly string[]).includes(name)) throw invalid(`${field}.${name}`, `unknown field "${name}" in ${field}; allowed: ${BUDGETS.join(', ')}`, 'unknown_field');
  }
  const out: RateLimitJson = { requests_per_minute: null, tokens_per_minute: null, concurrent_requests: null };
  for (const name of BUDGETS) {
    const budget = record[name];
    if (budget === undefined || budget === null) continue;
    if (typeof budget !== 'number' || !isBudget(budget)) throw budgetError(field, name);
    out[name] = budget;
  }
  return BUDGETS.every((name) => out[name] === null) ? null : out;
}

/**
 * The value rules alone, for a limit a transport has already typed (GraphQL's
 * input, the admin CLI): each budget a whole number from 1 to the maximum, or
 * null; every budget null is no limit: null. Same errors as `parseRateLimit`.
 */
export function checkRateLimit(value: RateLimitJson | null, field = 'rate_limit'): RateLimitJson | null {
  if (value === null) return null;
  const out: RateLimitJson = { requests_per_minute: null, tokens_per_minute: null, concurrent_requests: null };
  for (const name of BUDGETS) {
    const budget = value[name] ?? null;
    if (budget === null) continue;
    if (!isBudget(budget)) throw budgetError(field, name);
    out[name] = budget;
  }
  return BUDGETS.every((name) => out[name] === null) ? null : out;
}

const isBudget = (budget: number): boolean => Number.isInteger(budget) && budget >= 1 && budget <= MAX_BUDGET;

const budgetError = (field: string, name: string) =>
  invalid(`${field}.${name}`, `${field}.${name} must be a whole number from 1 to ${MAX_BUDGET}, or null for no limit on it`);

/** The limiter's form of a stored limit (null stays null). */
export function rateLimitOf(stored: RateLimitJson | null | undefined): RateLimit | null {
  if (!stored) return null;
  return {
    requestsPerMinute: stored.requests_per_minute ?? null,
    tokensPerMinute: stored.tokens_per_minute ?? null,
    concurrentRequests: stored.concurrent_requests ?? null,
  };
}
