// Text PostgreSQL cannot store, refused up front with a 400 naming the field
// (REST bodies, path and query values, GraphQL arguments) instead of failing
// inside an INSERT as a 500.
import { type AppError, appError } from '../errors';

export interface UnstorableText {
  /** e.g. `name` or `model_scope.1`; '' for the value itself. */
  field: string;
  problem: 'nul' | 'unpaired_surrogate';
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The first string (key or value) PostgreSQL cannot store: one holding
 * U+0000 (text cannot), or half of a UTF-16 surrogate pair (JSON text can be
 * parsed into one, but jsonb refuses its escape). Iterative: bodies may nest
 * deeper than the stack.
 */
export function unstorableText(value: unknown): UnstorableText | undefined {
  const check = (text: string, field: string): UnstorableText | undefined =>
    text.includes('\u0000') ? { field, problem: 'nul' } : UNPAIRED_SURROGATE.test(text) ? { field, problem: 'unpaired_surrogate' } : undefined;
  const pending: Array<[unknown, string]> = [[value, '']];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const [current, path] = item;
    if (typeof current === 'string') {
      const found = check(current, path);
      if (found) return found;
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        const childPath = path ? `${path}.${key}` : key;
        const found = check(key, childPath);
        if (found) return found;
        pending.push([child, childPath]);
      }
    }
  }
  return undefined;
}

/** A 400 `invalid_field` naming where the text is and what is wrong with it. */
export function unstorableError({ field, problem }: UnstorableText): AppError {
  const what = problem === 'nul' ? 'the NUL character (U+0000)' : 'half of a surrogate pair (ill-formed Unicode)';
  return appError('invalidField', `${field || 'body'}: must not contain ${what}`, { field: field || 'body' });
}
