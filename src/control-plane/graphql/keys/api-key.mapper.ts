import type { KeyView } from '../../../domain/keys/api-key.service';
import { KEY_RULES, type CreateKeyInput, type UpdateKeyInput } from '../../../domain/keys/key-input';
import { invalid } from '../../../errors';
import type { ApiKeyType } from './api-key.type';
import type { CreateApiKeyInput } from './create-api-key.input';
import type { UpdateApiKeyInput } from './update-api-key.input';
import { toRateLimitJson, toRateLimitType } from './rate-limit.type';

export function toApiKeyType(key: KeyView): ApiKeyType {
  return {
    id: key.id,
    name: key.name,
    dimension: key.dimension,
    status: key.status,
    suspendedReason: key.suspendedReason,
    usedTokens: key.usedTokens,
    modelScope: key.modelScope,
    expiresAt: key.expiresAt,
    rateLimit: toRateLimitType(key.rateLimit),
    lastUsedAt: key.lastUsedAt,
    createdAt: key.createdAt.toISOString(),
    secretHint: key.secretHint,
    rotatedFrom: key.rotatedFrom,
    rotatedTo: key.rotatedTo,
    cancelsAt: key.cancelsAt ? key.cancelsAt.toISOString() : null,
  };
}

/** A new key as the service takes it; GraphQL has typed each field, the service checks the values. */
export function toCreateKeyInput(input: CreateApiKeyInput): CreateKeyInput {
  return {
    name: input.name,
    dimension: input.dimension,
    modelScope: input.modelScope,
    ...(input.expiresAt !== undefined ? { expiresAt: input.expiresAt } : {}),
    ...(input.rateLimit !== undefined ? { rateLimit: toRateLimitJson(input.rateLimit) } : {}),
  };
}

/**
 * A change as the service takes it, holding only the fields the client sent;
 * an explicit `expiresAt: null` never expires and `rateLimit: null` lifts the
 * limit, while null for a field that cannot be cleared is refused naming it.
 */
export function toUpdateKeyInput(input: UpdateApiKeyInput): UpdateKeyInput {
  return {
    ...(input.name !== undefined ? { name: notNull(input.name, 'name', KEY_RULES.name) } : {}),
    ...(input.dimension !== undefined ? { dimension: notNull(input.dimension, 'dimension', KEY_RULES.dimension) } : {}),
    ...(input.modelScope !== undefined ? { modelScope: notNull(input.modelScope, 'model_scope', KEY_RULES.modelScope) } : {}),
    ...(input.expiresAt !== undefined ? { expiresAt: input.expiresAt } : {}),
    ...(input.rateLimit !== undefined ? { rateLimit: toRateLimitJson(input.rateLimit) } : {}),
  };
}

function notNull<T>(value: T | null, field: string, rule: string): T {
  if (value === null) throw invalid(field, rule);
  return value;
}
