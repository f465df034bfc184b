// The console's only way to the server: POST /graphql with a typed document
// from graphql-codegen (web/src/gql). Errors keep the server's
// `extensions.code` so the page can say what went wrong.
import type { TypedDocumentString } from '../gql/graphql';

export class ApiError extends Error {
  constructor(
    /** snake_case, from `extensions.code`; `network_error` when the server was not reached. */
    readonly code: string,
    message: string,
    /** The input field at fault, when the server named one. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface GraphqlResponse<T> {
  data?: T | null;
  errors?: { message?: string; extensions?: { code?: unknown; field?: unknown } }[];
}

/** Operations that have no variables may omit them. */
type VariablesArg<V> = Record<string, never> extends V ? [variables?: V] : [variables: V];

export type GraphqlRequest = <R, V>(document: TypedDocumentString<R, V>, ...variables: VariablesArg<V>) => Promise<R>;

/** A request function bound to a session token (null before login). */
export function graphqlClient(token: string | null, endpoint = '/graphql'): GraphqlRequest {
  return async <R, V>(document: TypedDocumentString<R, V>, ...[variables]: VariablesArg<V>): Promise<R> => {
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          // Apollo's CSRF prevention only admits JSON posts (or a preflighted header).
          'content-type': 'application/json',
          accept: 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ query: document.toString(), variables: variables ?? {} }),
      });
    } catch {
      throw new ApiError('network_error', 'The server could not be reached');
    }
    let body: GraphqlResponse<R>;
    try {
      body = (await response.json()) as GraphqlResponse<R>;
    } catch {
      throw new ApiError(response.ok ? 'bad_response' : `http_${response.status}`, `Unexpected reply (HTTP ${response.status})`);
    }
    const first = body.errors?.[0];
    if (first) {
      const code = typeof first.extensions?.code === 'string' ? first.extensions.code : 'internal_error';
      const field = typeof first.extensions?.field === 'string' ? first.extensions.field : undefined;
      throw new ApiError(code, first.message ?? code, field);
    }
    if (body.data === undefined || body.data === null) throw new ApiError('bad_response', `Unexpected reply (HTTP ${response.status})`);
    return body.data;
  };
}

/** Session-ending codes: the token is gone or was never valid. */
export const isSessionError = (error: unknown): boolean =>
  error instanceof ApiError && (error.code === 'missing_session' || error.code === 'invalid_session');
