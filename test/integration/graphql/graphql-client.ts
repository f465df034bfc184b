// Helpers for the GraphQL control-plane tests (not a spec file).
import type { TestApp } from '../../support/app';

// The same SQL and calendar helpers as the REST control-plane tests.
export { setExpiresAt, zoneToday } from '../control-plane/support';

export interface GraphqlError {
  message: string;
  path?: string[];
  extensions: { code: string; http?: number; field?: string; retryAfter?: number };
}

export interface GraphqlResponse<T = any> {
  status: number;
  /** The raw body the client received, for "never contains the secret" checks. */
  text: string;
  data: T | null;
  errors: GraphqlError[] | undefined;
}

/** POST /graphql with the session token as bearer. */
export async function gql<T = any>(t: TestApp, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<GraphqlResponse<T>> {
  const response = await fetch(`${t.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  const body = JSON.parse(text) as { data?: T | null; errors?: GraphqlError[] };
  return { status: response.status, text, data: body.data ?? null, errors: body.errors };
}

/** The single error's extensions code, or a failure that shows what came back instead. */
export function errorCode(response: GraphqlResponse): string {
  if (!response.errors || response.errors.length !== 1) throw new Error(`expected one error, got ${response.text}`);
  return response.errors[0]!.extensions.code;
}

/** The data, or a failure showing the errors. */
export function dataOf<T>(response: GraphqlResponse<T>): T {
  if (response.errors || response.data === null) throw new Error(`GraphQL errors: ${response.text}`);
  return response.data;
}

export const KEY_FIELDS = 'id name dimension status suspendedReason usedTokens modelScope expiresAt lastUsedAt createdAt secretHint';

/** The key mutations, each answering the key as `result`. */
export const KEY_MUTATIONS = {
  update: `mutation($id: ID!, $input: UpdateApiKeyInput!) { result: updateApiKey(id: $id, input: $input) { ${KEY_FIELDS} } }`,
  suspend: `mutation($id: ID!) { result: suspendApiKey(id: $id) { ${KEY_FIELDS} } }`,
  resume: `mutation($id: ID!) { result: resumeApiKey(id: $id) { ${KEY_FIELDS} } }`,
  cancel: `mutation($id: ID!) { result: cancelApiKey(id: $id) { ${KEY_FIELDS} } }`,
} as const;

export const CREATE_KEY = `mutation Create($input: CreateApiKeyInput!) { createApiKey(input: $input) { secret apiKey { ${KEY_FIELDS} } } }`;

let counter = 0;
export const uniqueName = (prefix = 'gql-key'): string => `${prefix}-${process.pid}-${Date.now().toString(36)}-${(counter += 1)}`;

/** Creates a key through GraphQL and returns the payload `{ apiKey, secret }`. */
export async function createKeyGql(t: TestApp, token: string, input: Record<string, unknown> = {}): Promise<{ apiKey: any; secret: string }> {
  const response = await gql(t, CREATE_KEY, { input: { name: uniqueName(), dimension: '部门', modelScope: ['tsxt-general'], ...input } }, token);
  return dataOf(response).createApiKey;
}
