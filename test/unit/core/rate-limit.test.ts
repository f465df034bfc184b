// The key resource's `rate_limit` field (issue 31): null or the three
// budgets, each a positive whole number or null; anything else is a 400
// naming the field at fault.
import { expect } from 'chai';
import { AppError } from '../../../src/errors';
import { parseRateLimit, rateLimitOf } from '../../../src/core/rate-limit';

describe('rate_limit input', () => {
  const accepted: Array<[string, unknown, unknown]> = [
    ['null is no limit', null, null],
    ['every budget', { requests_per_minute: 60, tokens_per_minute: 100_000, concurrent_requests: 4 }, { requests_per_minute: 60, tokens_per_minute: 100_000, concurrent_requests: 4 }],
    ['absent budgets are unlimited', { concurrent_requests: 2 }, { requests_per_minute: null, tokens_per_minute: null, concurrent_requests: 2 }],
    ['every budget null is no limit', { requests_per_minute: null, tokens_per_minute: null, concurrent_requests: null }, null],
    ['an empty object is no limit', {}, null],
  ];
  for (const [name, input, expected] of accepted) it(`accepts: ${name}`, () => expect(parseRateLimit(input)).to.deep.equal(expected));

  const refused: Array<[string, unknown, string]> = [
    ['a number', 60, 'rate_limit'],
    ['an array', [60], 'rate_limit'],
    ['an unknown budget', { requests_per_hour: 10 }, 'rate_limit.requests_per_hour'],
    ['zero', { requests_per_minute: 0 }, 'rate_limit.requests_per_minute'],
    ['a fraction', { tokens_per_minute: 1.5 }, 'rate_limit.tokens_per_minute'],
    ['a string', { concurrent_requests: '4' }, 'rate_limit.concurrent_requests'],
    ['past 10^12', { tokens_per_minute: 1e13 }, 'rate_limit.tokens_per_minute'],
  ];
  for (const [name, input, field] of refused) {
    it(`refuses ${name} with a 400 naming ${field}`, () => {
      let error: unknown;
      try {
        parseRateLimit(input);
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).status).to.equal(400);
      expect((error as AppError).field).to.equal(field);
    });
  }

  it('the limiter reads the stored form', () => {
    expect(rateLimitOf({ requests_per_minute: 5, tokens_per_minute: null, concurrent_requests: 1 })).to.deep.equal({ requestsPerMinute: 5, tokensPerMinute: null, concurrentRequests: 1 });
    expect(rateLimitOf(null)).to.equal(null);
  });
});
