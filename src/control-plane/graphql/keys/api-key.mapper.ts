import type { KeyView } from '../../../domain/keys/api-key.service';
import type { ApiKeyType } from './api-key.type';
import type { CreateApiKeyInput } from './create-api-key.input';
import type { UpdateApiKeyInput } from './update-api-key.input';
import { rateLimitBody, toRateLimitType } from './rate-limit.type';

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

/**
 * The domain's wire body (the same the REST transport passes), holding only
 * the fields the client sent: the domain validates them and names the field
 * at fault; an explicit `expiresAt: null` stays null ("never expires").
 */
export function toKeyBody(input: CreateApiKeyInput | UpdateApiKeyInput): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.name !== undefined) body.name = input.name;
  if (input.dimension !== undefined) body.dimension = input.dimension;
  if (input.modelScope !== undefined) body.model_scope = input.modelScope;
  if (input.expiresAt !== undefined) body.expires_at = input.expiresAt;
  if (input.rateLimit !== undefined) body.rate_limit = rateLimitBody(input.rateLimit);
  return body;
}
