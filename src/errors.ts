// One error family for the whole service. Each transport (REST, GraphQL,
// Anthropic form, OpenAI form) maps an AppError exactly once.
import { isDatabaseUnavailable } from './db/db-errors';

export type ErrorKind =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'conflict'
  | 'rate_limit'
  | 'payload_too_large'
  | 'unavailable'
  | 'upstream'
  | 'internal';

const STATUS: Record<ErrorKind, number> = {
  invalid_request: 400,
  authentication: 401,
  permission: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limit: 429,
  upstream: 502,
  unavailable: 503,
  internal: 500,
};

export interface AppErrorOptions {
  /** The request field at fault, e.g. `max_tokens` or `messages.0.role`. */
  field?: string;
  /** Extra reply headers, e.g. `x-should-retry` or `retry-after`. */
  headers?: Record<string, string>;
  /** Overrides the kind's default HTTP status (e.g. an upstream 529). */
  status?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly kind: ErrorKind,
    /** Stable snake_case code, e.g. `key_not_found`, `name_taken`. */
    readonly code: string,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.status = options.status ?? STATUS[kind];
    this.field = options.field;
    this.headers = options.headers ?? {};
  }
}

export const invalid = (field: string, message: string, code = 'invalid_field'): AppError =>
  new AppError('invalid_request', code, message, { field });

export const notFound = (code: string, message: string): AppError => new AppError('not_found', code, message);

export const conflict = (code: string, message: string, field?: string): AppError =>
  new AppError('conflict', code, message, field === undefined ? {} : { field });

/** The database cannot be reached: a 503 the caller may retry, on every transport. */
export const databaseUnavailable = (cause: unknown): AppError =>
  new AppError('unavailable', 'database_unavailable', 'The gateway cannot reach its database right now; retry shortly', {
    cause,
    headers: { 'retry-after': '1' },
  });

/** Anything that is not an AppError becomes an opaque 500 (no stack, no SQL), or a 503 when the database is unreachable. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable(error);
  return new AppError('internal', 'internal_error', 'Internal server error', { cause: error });
}
