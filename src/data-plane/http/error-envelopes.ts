import type { AppError, ErrorKind } from '../../errors';

// The two data-plane error forms (DESIGN §6). Each AppError is mapped once here.

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

export function errorBody(form: ErrorForm, error: AppError, requestId: string): unknown {
  if (form === 'anthropic') return { type: 'error', error: { type: ANTHROPIC_TYPE[error.kind], message: error.message }, request_id: requestId };
  return { error: { message: error.message, type: OPENAI_TYPE[error.kind], param: error.field ?? null, code: error.code } };
}

/** The error form a data-plane path answers in. */
export function errorFormFor(path: string, headers: Record<string, unknown>): ErrorForm {
  if (path.startsWith('/v1/chat/') || path.startsWith('/v1/responses') || path.startsWith('/v1/conversations')) return 'openai';
  if (path.startsWith('/v1/models')) return headers['anthropic-version'] ? 'anthropic' : 'openai';
  return 'anthropic';
}
