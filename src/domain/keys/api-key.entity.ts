import { defineEntity, p } from '@mikro-orm/core';
import { AccountSchema } from '../accounts/account.entity';
import type { RateLimitJson } from '../../core/rate-limit';

export const API_KEY_STORED_STATUSES = ['active', 'suspended', 'cancelled'] as const;

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.string().length(40).primary(),
    account: () => p.manyToOne(AccountSchema),
    name: p.string().length(64),
    dimension: p.string().length(16),
    /**
     * Stored state. `expired` and credit-limit suspension are derived on read
     * (account zone, account month-to-date), never written.
     */
    status: p.enum(API_KEY_STORED_STATUSES),
    modelScope: p.json<string[]>(),
    /** Last valid day (YYYY-MM-DD, account zone); null = never expires. */
    expiresAt: p.date().nullable(),
    /** Requests and unified tokens per minute, concurrent requests; null = no limit (docs/architecture.md §18). */
    rateLimit: p.json<RateLimitJson>().nullable(),
    /** SHA-256 (hex) of the secret; the secret itself is never stored. */
    secretHash: p.string().length(64).unique(),
    secretHint: p.string().length(32),
    usedTokens: p.bigint('number').default(0),
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    cancelledAt: p.datetime().nullable(),
    /** The key this one replaced by rotation (its predecessor), or null. */
    rotatedFrom: p.string().length(40).nullable(),
    /** The key that replaced this one by rotation (its successor), or null. */
    rotatedTo: p.string().length(40).nullable(),
    /** When a rotated-away key's grace ends: from then on it is cancelled (refused at once, written by the sweep). */
    cancelsAt: p.datetime().nullable(),
  },
  uniques: [
    // A name is unique among the account's live keys and reusable after cancel.
    // A key rotated away shares its name with its successor until it is cancelled.
    { name: 'api_keys_live_name_unique', properties: ['account', 'name'], where: "status <> 'cancelled' and rotated_to is null" },
  ],
  indexes: [
    { properties: ['account', 'createdAt'] },
    // The rotation sweep's scan: only keys whose grace is running.
    { name: 'api_keys_grace_running', properties: ['cancelsAt'], where: "cancels_at is not null and status <> 'cancelled'" },
  ],
});

export type ApiKey = InstanceType<typeof ApiKeySchema.class>;
