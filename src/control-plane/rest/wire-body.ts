// Wire-shape checks the REST control plane makes before a body becomes a
// domain input: the fields it may hold. Value rules (ranges, known names)
// stay in the domain, where every transport gets them.
import type { RawObject } from '../../core/canonical';
import { isObject } from '../../core/json-edit';
import { invalid } from '../../errors';

/** A body's fields beyond `allowed` are refused (400 naming the first), as the contract says. */
export function onlyFields(body: unknown, allowed: readonly string[]): void {
  if (!isObject(body)) return;
  for (const name of Object.keys(body)) {
    if (!allowed.includes(name)) throw invalid(name, `unknown field "${name}"; allowed: ${allowed.join(', ')}`, 'unknown_field');
  }
}

/** A body that must be a JSON object of the `allowed` fields: anything else is a 400 naming `body` or the field. */
export function objectBody(body: unknown, allowed: readonly string[]): RawObject {
  if (!isObject(body)) throw invalid('body', 'the request body must be a JSON object');
  onlyFields(body, allowed);
  return body;
}
