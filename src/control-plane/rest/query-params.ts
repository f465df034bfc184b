import { invalid } from '../../errors';

// Query parameters arrive as strings; the OpenAPI contract has already
// rejected malformed ones, these turn them into typed values with defaults.

export function intParam(query: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  const value = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(name, `${name} must be an integer from ${min} to ${max}`);
  return value;
}

export function enumParam<T extends string>(query: Record<string, unknown>, name: string, allowed: readonly T[]): T | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !(allowed as readonly string[]).includes(raw)) {
    throw invalid(name, `${name} must be one of ${allowed.join(', ')}`);
  }
  return raw as T;
}

export function stringParam(query: Record<string, unknown>, name: string, maxLength = 200): string | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > maxLength) throw invalid(name, `${name} must be a string of at most ${maxLength} characters`);
  return raw;
}
