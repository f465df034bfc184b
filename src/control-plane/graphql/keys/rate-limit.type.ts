import { Field, InputType, ObjectType } from 'type-graphql';
import type { RateLimitJson } from '../../../core/rate-limit';
import { SafeInt } from '../common/scalars';

@ObjectType({ description: "A key's rate limit, held across every gateway process; a null budget is unlimited." })
export class RateLimitType {
  @Field(() => SafeInt, { nullable: true, description: 'Requests per UTC calendar minute.' })
  requestsPerMinute!: number | null;

  @Field(() => SafeInt, { nullable: true, description: "Unified tokens per UTC calendar minute (a call's worst case at admission, corrected at settlement)." })
  tokensPerMinute!: number | null;

  @Field(() => SafeInt, { nullable: true, description: 'Calls running at once.' })
  concurrentRequests!: number | null;
}

@InputType({ description: 'Budgets of a rate limit; absent or null = unlimited.' })
export class RateLimitInput {
  @Field(() => SafeInt, { nullable: true })
  requestsPerMinute?: number | null;

  @Field(() => SafeInt, { nullable: true })
  tokensPerMinute?: number | null;

  @Field(() => SafeInt, { nullable: true })
  concurrentRequests?: number | null;
}

export function toRateLimitType(limit: RateLimitJson | null): RateLimitType | null {
  return limit && { requestsPerMinute: limit.requests_per_minute, tokensPerMinute: limit.tokens_per_minute, concurrentRequests: limit.concurrent_requests };
}

/** The domain's value (absent budgets are unlimited); the service checks the budgets' ranges. */
export function toRateLimitJson(input: RateLimitInput | null): RateLimitJson | null {
  return (
    input && {
      requests_per_minute: input.requestsPerMinute ?? null,
      tokens_per_minute: input.tokensPerMinute ?? null,
      concurrent_requests: input.concurrentRequests ?? null,
    }
  );
}
