// Same-protocol relay keeps the upstream's own fields: each mapper names the
// fields it maps (or the gateway owns) and keeps the rest as they came.
import type { RawObject } from '../core/canonical';

/** `object` without `keys`, or undefined when nothing is left. */
export function except(object: RawObject, keys: ReadonlySet<string>): RawObject | undefined {
  let rest: RawObject | undefined;
  for (const key in object) {
    if (keys.has(key)) continue;
    (rest ??= {})[key] = object[key];
  }
  return rest;
}
