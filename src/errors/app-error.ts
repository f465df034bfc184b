// One error family for the whole service. Each transport (REST, GraphQL,
// Anthropic form, OpenAI form) maps an AppError exactly once. The errors the
// gateway raises are declared once, in codes.ts.

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

export const KIND_STATUS: Record<ErrorKind, number> = {
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
    this.status = options.status ?? KIND_STATUS[kind];
    this.field = options.field;
    this.headers = options.headers ?? {};
  }
}
