import { defineEntity, p } from '@mikro-orm/core';
import type { RateLimitJson } from '../../core/rate-limit';

export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: {
    id: p.string().length(40).primary(),
    name: p.string().length(128).unique(),
    timezone: p.string().length(64),
    currency: p.string().length(8),
    /** Monthly credit limit in micro-units of `currency`; null = unlimited. */
    creditLimitMicros: p.bigint('number').nullable(),
    /**
     * What admission does with a call whose worst case does not fit the
     * remaining credit: `refuse` it (429), or `lower_max_tokens` to what fits
     * when at least a useful minimum does (docs/architecture.md §9).
     */
    creditOverflow: p.string().length(20).default('refuse'),
    /** The rate limit new keys of the account get unless their creation says otherwise; null = none. */
    keyRateLimit: p.json<RateLimitJson>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type Account = InstanceType<typeof AccountSchema.class>;
