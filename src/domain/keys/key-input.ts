// Validation of key fields (docs/architecture.md §14). Every failure is a 400 naming the field.
import { invalid } from '../../errors';
import { isCalendarDate } from '../zone-time';
import { parseRateLimit, type RateLimitJson } from '../../core/rate-limit';

export const DIMENSIONS = ['部门', '业务线', '成本中心'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

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

const FIELDS = ['name', 'dimension', 'model_scope', 'expires_at', 'rate_limit'] as const;

function assertObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('body', 'the request body must be a JSON object');
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      throw invalid(key, `unknown field "${key}"; allowed: ${FIELDS.join(', ')}`, 'unknown_field');
    }
  }
  return record;
}

function name(value: unknown): string {
  if (typeof value !== 'string') throw invalid('name', 'name must be a string');
  const trimmed = value.trim();
  if (trimmed.length < 1 || [...trimmed].length > 64) throw invalid('name', 'name must be 1–64 characters');
  return trimmed;
}

function dimension(value: unknown): Dimension {
  if (typeof value !== 'string' || !(DIMENSIONS as readonly string[]).includes(value)) {
    throw invalid('dimension', `dimension must be one of ${DIMENSIONS.join(', ')}`);
  }
  return value as Dimension;
}

function modelScope(value: unknown, ctx: ValidationContext): string[] {
  if (!Array.isArray(value) || value.length === 0) throw invalid('model_scope', 'model_scope must be a non-empty array of model names');
  const out: string[] = [];
  for (const [i, item] of value.entries()) {
    if (typeof item !== 'string') throw invalid(`model_scope[${i}]`, 'model_scope items must be strings');
    if (!ctx.isKnownModel(item)) {
      throw invalid('model_scope', `unknown model "${item}" in model_scope; known models: ${ctx.knownModels().join(', ')}`, 'unknown_model');
    }
    if (!out.includes(item)) out.push(item);
  }
  return out;
}

function expiresAt(value: unknown, ctx: ValidationContext): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !isCalendarDate(value)) {
    throw invalid('expires_at', 'expires_at must be a date YYYY-MM-DD, or null for a key that never expires');
  }
  if (value < ctx.today) throw invalid('expires_at', `expires_at must be today (${ctx.today}) or later in the account's time zone`);
  return value;
}

export function parseCreateInput(body: unknown, ctx: ValidationContext): KeyFields {
  const record = assertObject(body);
  if (record.name === undefined) throw invalid('name', 'name is required');
  if (record.dimension === undefined) throw invalid('dimension', `dimension is required (one of ${DIMENSIONS.join(', ')})`);
  if (record.model_scope === undefined) throw invalid('model_scope', 'model_scope is required');
  return {
    name: name(record.name),
    dimension: dimension(record.dimension),
    modelScope: modelScope(record.model_scope, ctx),
    expiresAt: expiresAt(record.expires_at, ctx),
    ...(record.rate_limit !== undefined ? { rateLimit: parseRateLimit(record.rate_limit) } : {}),
  };
}

export function parseUpdateInput(body: unknown, ctx: ValidationContext): Partial<KeyFields> {
  const record = assertObject(body);
  const out: Partial<KeyFields> = {};
  if (record.name !== undefined) out.name = name(record.name);
  if (record.dimension !== undefined) out.dimension = dimension(record.dimension);
  if (record.model_scope !== undefined) out.modelScope = modelScope(record.model_scope, ctx);
  if ('expires_at' in record) out.expiresAt = expiresAt(record.expires_at, ctx);
  if (record.rate_limit !== undefined) out.rateLimit = parseRateLimit(record.rate_limit);
  if (Object.keys(out).length === 0) throw invalid('body', `the request body has nothing to update; send at least one of ${FIELDS.join(', ')}`);
  return out;
}
