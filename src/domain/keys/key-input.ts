// Key fields (docs/architecture.md §14): the typed inputs every transport maps
// its request to (the REST body, the GraphQL input, the admin CLI's flags),
// and the value rules the key service applies to them, so each transport gets
// the same ones. Every failure is a 400 naming the field by its wire name.
import { invalid } from '../../errors';
import { isCalendarDate } from '../zone-time';
import { checkRateLimit, type RateLimitJson } from '../../core/rate-limit';

export const DIMENSIONS = ['部门', '业务线', '成本中心'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** A new key. */
export interface CreateKeyInput {
  name: string;
  /** One of DIMENSIONS (checked by the service). */
  dimension: string;
  modelScope: string[];
  /** `YYYY-MM-DD`; null or absent = never expires. */
  expiresAt?: string | null;
  /** null = no limit; absent = the account's default for new keys. */
  rateLimit?: RateLimitJson | null;
}

/** A change to a key: an absent field stays as it is; null clears the expiry (never expires) or the rate limit (none). */
export interface UpdateKeyInput {
  name?: string;
  dimension?: string;
  modelScope?: string[];
  expiresAt?: string | null;
  rateLimit?: RateLimitJson | null;
}

/** A key's fields after the value rules. */
export interface KeyFields {
  name: string;
  dimension: Dimension;
  modelScope: string[];
  /** `YYYY-MM-DD` or null = never expires. */
  expiresAt: string | null;
  /** null = no limit; undefined on create = the account's default for new keys. */
  rateLimit?: RateLimitJson | null;
}

export interface ValidationContext {
  /** Today in the account's zone. */
  today: string;
  isKnownModel(name: string): boolean;
  knownModels(): string[];
}

/** The fields by their wire names, as errors name them. */
export const KEY_FIELDS = ['name', 'dimension', 'model_scope', 'expires_at', 'rate_limit'] as const;

/** What each field must be: a transport's type check and the value rule answer with the same words. */
export const KEY_RULES = {
  name: 'name must be a string',
  dimension: `dimension must be one of ${DIMENSIONS.join(', ')}`,
  modelScope: 'model_scope must be a non-empty array of model names',
  expiresAt: 'expires_at must be a date YYYY-MM-DD, or null for a key that never expires',
} as const;

function name(value: string): string {
  const trimmed = value.trim();
  if (trimmed.length < 1 || [...trimmed].length > 64) throw invalid('name', 'name must be 1–64 characters');
  return trimmed;
}

function dimension(value: string): Dimension {
  if (!(DIMENSIONS as readonly string[]).includes(value)) throw invalid('dimension', KEY_RULES.dimension);
  return value as Dimension;
}

function modelScope(value: string[], ctx: ValidationContext): string[] {
  if (value.length === 0) throw invalid('model_scope', KEY_RULES.modelScope);
  const out: string[] = [];
  for (const item of value) {
    if (!ctx.isKnownModel(item)) {
      throw invalid('model_scope', `unknown model "${item}" in model_scope; known models: ${ctx.knownModels().join(', ')}`, 'unknown_model');
    }
    if (!out.includes(item)) out.push(item);
  }
  return out;
}

function expiresAt(value: string | null | undefined, ctx: ValidationContext): string | null {
  if (value === null || value === undefined) return null;
  if (!isCalendarDate(value)) throw invalid('expires_at', KEY_RULES.expiresAt);
  if (value < ctx.today) throw invalid('expires_at', `expires_at must be today (${ctx.today}) or later in the account's time zone`);
  return value;
}

export function checkCreateInput(input: CreateKeyInput, ctx: ValidationContext): KeyFields {
  return {
    name: name(input.name),
    dimension: dimension(input.dimension),
    modelScope: modelScope(input.modelScope, ctx),
    expiresAt: expiresAt(input.expiresAt, ctx),
    ...(input.rateLimit !== undefined ? { rateLimit: checkRateLimit(input.rateLimit) } : {}),
  };
}

export function checkUpdateInput(input: UpdateKeyInput, ctx: ValidationContext): Partial<KeyFields> {
  const out: Partial<KeyFields> = {};
  if (input.name !== undefined) out.name = name(input.name);
  if (input.dimension !== undefined) out.dimension = dimension(input.dimension);
  if (input.modelScope !== undefined) out.modelScope = modelScope(input.modelScope, ctx);
  if (input.expiresAt !== undefined) out.expiresAt = expiresAt(input.expiresAt, ctx);
  if (input.rateLimit !== undefined) out.rateLimit = checkRateLimit(input.rateLimit);
  if (Object.keys(out).length === 0) throw invalid('body', `the request body has nothing to update; send at least one of ${KEY_FIELDS.join(', ')}`);
  return out;
}
