import type { MiddlewareFn } from 'type-graphql';
import { unstorableError, unstorableText } from '../../../http/storable-text';

/**
 * Refuses arguments holding text PostgreSQL cannot store (U+0000, half a
 * surrogate pair) before any resolver runs, naming the argument
 * (`input.name`), as REST does for bodies; otherwise the INSERT fails and the
 * client sees only `internal_error`.
 *
 * Every resolver class carries it (`@UseMiddleware(storableArgs)`): only their
 * root fields take arguments. Not a global middleware, which type-graphql
 * would wrap around every field of every result, making each one async.
 */
export const storableArgs: MiddlewareFn = async ({ args }, next) => {
  const found = unstorableText(args);
  if (found) throw unstorableError(found);
  return next();
};
