// What every adapter does with a call that arrives in another protocol's form
// (docs/architecture.md §4): translate what has a counterpart, list what it drops, and
// refuse, naming the field and the deployment's protocol, what it cannot
// drop without changing what the caller relies on.
import { appError } from '../errors';
import type { SourceRequest } from '../core/canonical';
import type { ProviderType } from '../core/catalog.types';

/** 400 naming the first field the other protocol cannot honour. */
export function refuseUntranslated(source: SourceRequest, protocol: ProviderType): void {
  const first = source.untranslated.refused[0];
  if (first === undefined) return;
  throw appError('untranslatableField', { field: first.field, protocol, reason: first.reason }, { field: first.field });
}
