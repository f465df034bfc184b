import type { IncomingHttpHeaders } from 'node:http';
import type { AppError, ErrorKind } from '../../errors';

// The two data-plane error forms (docs/architecture.md §4). Each AppError is mapped once
// here; which form a reply takes is its route's (its codec's), fixed when the
// route is built.

const ANTHROPIC_TYPE: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  conflict: 'invalid_request_error',
  payload_too_large: 'request_too_large',
  rate_limit: 'rate_limit_error',
  upstream: 'api_error',
  unavailable: 'overloaded_error',
  internal: 'api_error',
};

const OPENAI_TYPE: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  conflict: 'invalid_request_error',
  payload_too_large: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  upstream: 'server_error',
  unavailable: 'server_error',
  internal: 'server_error',
};

export type ErrorForm = 'anthropic' | 'openai';

/**
 * The error form a route answers in: its codec's, or, for the model list and
 * model lookup that serve both clients, Anthropic's when the request carries
 * `anthropic-version` and OpenAI's otherwise.
 */
export type RouteErrorForm = ErrorForm | 'by_version';

export function errorFormOf(route: RouteErrorForm, headers: IncomingHttpHeaders): ErrorForm {
  if (route !== 'by_version') return route;
  return headers['anthropic-version'] ? 'anthropic' : 'openai';
}

export function errorBody(form: ErrorForm, error: AppError, requestId: string): unknown {
  if (form === 'anthropic') return { type: 'error', error: { type: ANTHROPIC_TYPE[error.kind], message: error.message }, request_id: requestId };
  return { error: { message: error.message, type: OPENAI_TYPE[error.kind], param: error.field ?? null, code: error.code } };
}

/** What an error reply needs of a reply: Fastify's, or the fast path's. */
export interface ErrorReply {
  code(status: number): ErrorReply;
  header(name: string, value: string): ErrorReply;
  headers(values: Record<string, string>): ErrorReply;
  send(payload: unknown): unknown;
}

/** The error's status, headers and body in `form`. */
export function sendError(reply: ErrorReply, form: ErrorForm, error: AppError, requestId: string): void {
  void reply.code(error.status).headers(error.headers).header('content-type', 'application/json').send(errorBody(form, error, requestId));
}

/**
 * A /v1 request no route took (an unknown path, a malformed URL) has no
 * codec to say its form: the only place the form is read from the path.
 */
export function sendUnroutedError(reply: ErrorReply, path: string, headers: IncomingHttpHeaders, error: AppError, requestId: string): void {
  sendError(reply, errorFormFor(path, headers), error, requestId);
}

function errorFormFor(path: string, headers: IncomingHttpHeaders): ErrorForm {
  if (path.startsWith('/v1/chat/') || path.startsWith('/v1/responses') || path.startsWith('/v1/conversations')) return 'openai';
  if (path.startsWith('/v1/models')) return errorFormOf('by_version', headers);
  return 'anthropic';
}
