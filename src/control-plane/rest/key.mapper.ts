import { parseRateLimit } from '../../core/rate-limit';
import type { CreatedKey, KeyView } from '../../domain/keys/api-key.service';
import { DIMENSIONS, KEY_FIELDS, KEY_RULES, type CreateKeyInput, type UpdateKeyInput } from '../../domain/keys/key-input';
import { GRACE_HOURS_RULE, type RotateKeyInput } from '../../domain/keys/key-rotation.service';
import { invalid } from '../../errors';
import { objectBody } from './wire-body';

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

// The request bodies' wire shape: a JSON object of known fields, each of its
// JSON type; the values (lengths, known models, dates, ranges) are the key
// service's rules, the same for every transport.

function keyBody(body: unknown): Record<string, unknown> {
  return objectBody(body, KEY_FIELDS);
}

function stringField(value: unknown, field: string, rule: string): string {
  if (typeof value !== 'string') throw invalid(field, rule);
  return value;
}

function modelScopeField(value: unknown): string[] {
  if (!Array.isArray(value)) throw invalid('model_scope', KEY_RULES.modelScope);
  for (const [i, item] of value.entries()) {
    if (typeof item !== 'string') throw invalid(`model_scope[${i}]`, 'model_scope items must be strings');
  }
  return value as string[];
}

function expiresAtField(value: unknown): string | null {
  if (value === null) return null;
  return stringField(value, 'expires_at', KEY_RULES.expiresAt);
}

/** `POST /api/v1/keys`: `{name, dimension, model_scope, expires_at?, rate_limit?}`. */
export function createKeyInput(body: unknown): CreateKeyInput {
  const record = keyBody(body);
  if (record.name === undefined) throw invalid('name', 'name is required');
  if (record.dimension === undefined) throw invalid('dimension', `dimension is required (one of ${DIMENSIONS.join(', ')})`);
  if (record.model_scope === undefined) throw invalid('model_scope', 'model_scope is required');
  return {
    name: stringField(record.name, 'name', KEY_RULES.name),
    dimension: stringField(record.dimension, 'dimension', KEY_RULES.dimension),
    modelScope: modelScopeField(record.model_scope),
    ...(record.expires_at !== undefined ? { expiresAt: expiresAtField(record.expires_at) } : {}),
    ...(record.rate_limit !== undefined ? { rateLimit: parseRateLimit(record.rate_limit) } : {}),
  };
}

/** `PATCH /api/v1/keys/{id}`: any of the create fields; `expires_at: null` never expires, `rate_limit: null` lifts the limit. */
export function updateKeyInput(body: unknown): UpdateKeyInput {
  const record = keyBody(body);
  return {
    ...(record.name !== undefined ? { name: stringField(record.name, 'name', KEY_RULES.name) } : {}),
    ...(record.dimension !== undefined ? { dimension: stringField(record.dimension, 'dimension', KEY_RULES.dimension) } : {}),
    ...(record.model_scope !== undefined ? { modelScope: modelScopeField(record.model_scope) } : {}),
    ...('expires_at' in record ? { expiresAt: expiresAtField(record.expires_at) } : {}),
    ...(record.rate_limit !== undefined ? { rateLimit: parseRateLimit(record.rate_limit) } : {}),
  };
}

/** `POST /api/v1/keys/{id}/rotate`: no body, or `{grace_hours}` (null = the default). */
export function rotateKeyInput(body: unknown): RotateKeyInput {
  if (body === undefined || body === null) return {};
  const value = objectBody(body, ['grace_hours']).grace_hours;
  if (value === undefined || value === null) return {};
  if (typeof value !== 'number') throw invalid('grace_hours', GRACE_HOURS_RULE);
  return { graceHours: value };
}
