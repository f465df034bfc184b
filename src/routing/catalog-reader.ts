// The typed readers the catalog parser is built from. Each reports a bad value
// as `path: message` and keeps going, so an operator sees every problem of a
// hand-written file in one run instead of fixing them one restart at a time.
import { parseDecimal } from '../core/decimal';
import type { Decimal } from '../core/catalog.types';

export type Json = Record<string, unknown>;

/** The environment the catalog resolves `api_key_env` (and the built-in catalog its keys) from. */
export type Env = Readonly<Record<string, string | undefined>>;

export interface CatalogIssue {
  /** JSON-pointer-ish location, e.g. `models[0].routes.standard[1].provider`; '' for the whole file. */
  path: string;
  message: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `prices` + `"thinking.output"` → `prices["thinking.output"]`; `providers` + `sim` → `providers.sim`. */
export function at(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}

export function suggestion(word: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best === undefined ? '' : ` (did you mean "${best}"?)`;
}

/** Collects issues while reading; readers return undefined for absent or bad values. */
export class Reader {
  readonly issues: CatalogIssue[] = [];

  fail(path: string, message: string): undefined {
    this.issues.push({ path, message });
    return undefined;
  }

  object(value: unknown, path: string, allowed?: readonly string[]): Json | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.fail(path, 'must be an object');
    const json = value as Json;
    // `x-…` and `_comment…` keys are the operator's notes; anything else unknown is a typo.
    if (allowed !== undefined) {
      for (const key of Object.keys(json)) {
        if (allowed.includes(key) || key.startsWith('x-') || key.startsWith('_comment')) continue;
        this.fail(at(path, key), `unknown key${suggestion(key, allowed)}; allowed: ${allowed.join(', ')}`);
      }
    }
    return json;
  }

  array(value: unknown, path: string): unknown[] | undefined {
    return Array.isArray(value) ? value : this.fail(path, 'must be an array');
  }

  string(json: Json, key: string, path: string, pattern?: RegExp, hint?: string): string | undefined {
    const value = json[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '') return this.fail(at(path, key), 'must be a non-empty string');
    if (pattern !== undefined && !pattern.test(value)) return this.fail(at(path, key), `${hint ?? 'is invalid'}, got ${JSON.stringify(value)}`);
    return value;
  }

  required<T>(value: T | undefined, json: Json, key: string, path: string): T | undefined {
    if (value === undefined && json[key] === undefined) this.fail(at(path, key), 'is required');
    return value;
  }

  integer(json: Json, key: string, path: string, min: number, max: number): number | undefined {
    const value = json[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return this.fail(at(path, key), `must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    return value;
  }

  /** A decimal (JSON number or string) checked by `accept`, which returns an error text or ''. */
  decimal(value: unknown, path: string, accept: (decimal: Decimal) => string): Decimal | undefined {
    if (typeof value !== 'number' && typeof value !== 'string') return this.fail(path, 'must be a decimal number or string');
    try {
      const decimal = parseDecimal(value);
      const problem = accept(decimal);
      return problem === '' ? decimal : this.fail(path, problem);
    } catch (error) {
      return this.fail(path, (error as Error).message);
    }
  }
}
