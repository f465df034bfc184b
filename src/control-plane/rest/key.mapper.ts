import type { CreatedKey, KeyView } from '../../domain/keys/api-key.service';

/** A key summary as the REST control plane shows it (never the secret). */
export function keySummary(key: KeyView) {
  return {
    api_key_id: key.id,
    name: key.name,
    dimension: key.dimension,
    status: key.status,
    suspended_reason: key.suspendedReason,
    used_tokens: key.usedTokens,
    model_scope: key.modelScope,
    expires_at: key.expiresAt,
    rate_limit: key.rateLimit,
    last_used_at: key.lastUsedAt,
    created_at: key.createdAt.toISOString(),
    secret_hint: key.secretHint,
    rotated_from: key.rotatedFrom,
    rotated_to: key.rotatedTo,
    cancels_at: key.cancelsAt ? key.cancelsAt.toISOString() : null,
  };
}

export function createdKey(created: CreatedKey) {
  return { ...keySummary(created.key), api_key: created.secret };
}
