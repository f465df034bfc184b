import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { AppError, toAppError } from '../../errors';

// Apollo's own request errors: the client's fault, and their messages name no
// internals, so they pass through with a snake_case code.
const CLIENT_ERRORS = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/** The AppError behind a (possibly wrapped) GraphQL error, if any. */
export function findAppError(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let hops = 0; hops < 8 && current !== undefined; hops += 1) {
    if (current instanceof AppError) return current;
    current = current instanceof GraphQLError ? current.originalError : undefined;
  }
  return undefined;
}

export function isClientError(formatted: GraphQLFormattedError): boolean {
  const code = formatted.extensions?.code;
  return typeof code === 'string' && CLIENT_ERRORS.has(code);
}

/**
 * The GraphQL transport's one error mapping (Apollo's `formatError`): an
 * AppError keeps its code, field, HTTP status and retry-after seconds in `extensions`; anything
 * unexpected becomes an opaque `internal_error` with no stack and no SQL.
 */
export function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const where = {
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
  };
  const appError = findAppError(error);
  if (!appError && isClientError(formatted)) {
    return { message: formatted.message, ...where, extensions: { code: String(formatted.extensions?.code).toLowerCase(), http: 400 } };
  }
  const mapped = appError ?? toAppError(error);
  // What REST sends as a retry-after header (login throttling, database outage), in seconds.
  const retryAfter = Number(mapped.headers['retry-after']);
  return {
    message: mapped.message,
    ...where,
    extensions: {
      code: mapped.code,
      http: mapped.status,
      ...(mapped.field ? { field: mapped.field } : {}),
      ...(Number.isInteger(retryAfter) && retryAfter > 0 ? { retryAfter } : {}),
    },
  };
}

/** graphql-js's suggestion tail (" Did you mean "x" or "y"?"), as Apollo's own DisableSuggestions plugin strips it. */
export function withoutSuggestions(message: string): string {
  return message.replace(/ ?Did you mean(.+?)\?$/s, '');
}
