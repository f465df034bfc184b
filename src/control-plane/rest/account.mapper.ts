// The account's defaults for new keys on the wire (docs/architecture.md §18):
// `{ rate_limit: {...} | null }` ↔ the domain's KeyDefaultsInput.
import { isObject } from '../../core/json-edit';
import { parseRateLimit, type RateLimitJson } from '../../core/rate-limit';
import type { KeyDefaultsInput } from '../../domain/accounts/account.service';
import { invalid } from '../../errors';
import { onlyFields } from './wire-body';

/** `rate_limit` as the wire gives it: null or an object of numbers; any other type gets the domain's 400 naming it. */
export function rateLimitOf(value: unknown, field = 'rate_limit'): RateLimitJson | null {
  if (value === null) return null;
  if (isObject(value) && Object.values(value).every((budget) => budget === null || typeof budget === 'number')) return value as unknown as RateLimitJson;
  return parseRateLimit(value, field);
}

export function keyDefaultsInput(body: unknown): KeyDefaultsInput {
  if (!isObject(body) || !('rate_limit' in body)) {
    throw invalid('rate_limit', 'rate_limit is required: an object with requests_per_minute, tokens_per_minute, concurrent_requests, or null for none');
  }
  onlyFields(body, ['rate_limit']);
  return { rateLimit: rateLimitOf(body.rate_limit) };
}
