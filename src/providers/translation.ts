// What every adapter does with a call that arrives in another protocol's form
// (DESIGN §6): translate what has a counterpart, list what it drops, and
// refuse, naming the field and the deployment's protocol, what it cannot
// drop without changing what the caller relies on.
import { AppError } from '../errors';
import type { SourceRequest } from '../core/canonical';
import type { ProviderType } from '../core/catalog.types';

/** 400 naming the first field the other protocol cannot honour. */
export function refuseUntranslated(source: SourceRequest, protocol: ProviderType): void {
  const first = source.untranslated.refused[0];
  if (first === undefined) return;
  throw new AppError(
    'invalid_request',
    'untranslatable_field',
    `${first.field}: the chosen deployment speaks the ${protocol} protocol, which cannot honour this (${first.reason})`,
    { field: first.field },
  );
}
