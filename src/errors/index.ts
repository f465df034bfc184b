// The error family (app-error.ts), its catalogue (codes.ts), and the one way
// any thrown value becomes the AppError a transport answers with.
import { isDatabaseUnavailable } from '../db/db-errors';
import { AppError } from './app-error';
import { appError } from './codes';

export { AppError, type AppErrorOptions, type ErrorKind } from './app-error';
export { ERRORS, appError, type ErrorName } from './codes';

/** A 400 naming the field, for validation whose message and code are the caller's (the domain's checks). */
export const invalid = (field: string, message: string, code = 'invalid_field'): AppError =>
  new AppError('invalid_request', code, message, { field });

export const notFound = (code: string, message: string): AppError => new AppError('not_found', code, message);

export const conflict = (code: string, message: string, field?: string): AppError =>
  new AppError('conflict', code, message, field === undefined ? {} : { field });

/** The database cannot be reached: a 503 the caller may retry, on every transport. */
export const databaseUnavailable = (cause: unknown): AppError => appError('databaseUnavailable', { cause });

/**
 * The AppError for anything thrown. Fastify's own 4xx (a body that is not
 * JSON, too large, of the wrong content type; the JSON parser's errors look
 * the same) keep their status; an unreachable database is a 503 the caller
 * may retry; anything else is an opaque 500 (no stack, no SQL).
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const statusCode = typeof error === 'object' && error !== null ? (error as { statusCode?: unknown }).statusCode : undefined;
  if (typeof statusCode === 'number' && statusCode < 500) {
    if (statusCode === 413) return appError('bodyTooLarge');
    if (statusCode === 415) return appError('unsupportedMediaType');
    return appError('malformedBody', (error as Error).message, { status: statusCode });
  }
  if (isDatabaseUnavailable(error)) return databaseUnavailable(error);
  return appError('internalError', { cause: error });
}

/** Where a failed request is logged: pino's logger (a request's child logger carries its request id). */
export interface ErrorLog {
  error(bindings: object, message: string): void;
}

/**
 * The AppError a transport answers `error` with; a failure on the gateway's
 * side (5xx) is logged here, once, with its cause. A 4xx is an answer, not a
 * failure, and is not logged.
 */
export function reportedError(error: unknown, log: ErrorLog, what: string, requestId?: string): AppError {
  const answer = toAppError(error);
  if (answer.status >= 500) {
    const err = answer.cause ?? answer;
    log.error(requestId === undefined ? { err } : { err, request_id: requestId }, what);
  }
  return answer;
}
