// Every error the gateway raises for a fixed condition, declared once: its
// wire code, its kind (which sets the HTTP status and the data-plane error
// type), its message, and the headers it always carries. Raise one with
// `appError(name, …)`; a message that names something (a field, a limit, a
// model) takes its parameters as the entry's message function declares them.
// Several entries may share a wire code when clients see one condition told in
// more detail (e.g. `overloaded`: which budget is full).
import { AppError, type AppErrorOptions, type ErrorKind } from './app-error';

interface ErrorEntry {
  readonly code: string;
  readonly kind: ErrorKind;
  /** A fixed text, or one built from the entry's parameters. */
  readonly message: string | ((params: never) => string);
  /** A status other than the kind's. */
  readonly status?: number;
  readonly field?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Retry in a second: what a busy gateway says. */
const RETRY_SOON = { 'retry-after': '1' } as const;
/** A refusal the official clients must not retry (they retry 429 by default). */
const NO_RETRY = { 'x-should-retry': 'false' } as const;
/** Retry in a second; the connection closes, since the rest of the body is not read. */
const RETRY_SOON_CLOSE = { 'retry-after': '1', connection: 'close' } as const;

export const ERRORS = {
  // ---- any surface
  internalError: { code: 'internal_error', kind: 'internal', message: 'Internal server error' },
  databaseUnavailable: {
    code: 'database_unavailable',
    kind: 'unavailable',
    message: 'The gateway cannot reach its database right now; retry shortly',
    headers: RETRY_SOON,
  },
  invalidField: { code: 'invalid_field', kind: 'invalid_request', message: (text: string) => text },
  bodyTooDeep: {
    code: 'body_too_deep',
    kind: 'invalid_request',
    message: (p: { field: string; max: number; what: 'body' | 'JSON' }) => `${p.field}: the ${p.what} nests deeper than ${p.max} levels`,
  },
  malformedBody: { code: 'malformed_body', kind: 'invalid_request', field: 'body', message: (detail: string) => `The request body is not valid JSON: ${detail}` },
  unsupportedMediaType: { code: 'unsupported_media_type', kind: 'invalid_request', status: 415, field: 'body', message: 'Send the body as application/json' },
  bodyTooLarge: { code: 'body_too_large', kind: 'payload_too_large', field: 'body', message: 'The request body is too large' },
  bodyPastAllowance: {
    code: 'body_too_large',
    kind: 'payload_too_large',
    field: 'body',
    headers: { connection: 'close' },
    message: (p: { limit: string; who: string }) => `The request body is larger than ${p.limit}, the most ${p.who} may send`,
  },
  bodiesOverloaded: {
    code: 'overloaded',
    kind: 'unavailable',
    headers: RETRY_SOON_CLOSE,
    message: 'The gateway holds as many request bodies as its memory allows; retry shortly',
  },
  clientBodiesOverloaded: {
    code: 'overloaded',
    kind: 'unavailable',
    headers: RETRY_SOON_CLOSE,
    message: (limit: string) =>
      `One client address may hold at most ${limit} of request bodies in flight (GATEWAY_CLIENT_BODY_BUDGET_MB); retry when one has been answered`,
  },
  anonymousBodiesOverloaded: {
    code: 'overloaded',
    kind: 'unavailable',
    headers: RETRY_SOON_CLOSE,
    message: (limit: string) => `Requests without an API key or console session share ${limit} of request bodies in flight, all taken now; retry shortly`,
  },
  tooManyBodies: {
    code: 'too_many_requests',
    kind: 'rate_limit',
    headers: RETRY_SOON_CLOSE,
    message: (max: number) => `At most ${max} request bodies from one client are read at once; retry when one has been sent`,
  },
  pathParameterTooLong: { code: 'path_parameter_too_long', kind: 'invalid_request', status: 414, message: 'A path parameter is too long' },
  malformedUrl: { code: 'malformed_url', kind: 'invalid_request', message: 'The request URL is not valid (bad percent-encoding)' },
  routeNotFound: { code: 'route_not_found', kind: 'not_found', message: (p: { method: string; path: string }) => `no route ${p.method} ${p.path}` },
  shuttingDown: {
    code: 'shutting_down',
    kind: 'unavailable',
    headers: RETRY_SOON,
    message: 'The gateway is shutting down and cut this call at the end of its grace period; retry it',
  },

  // ---- data plane: keys and credit
  missingApiKey: { code: 'missing_api_key', kind: 'authentication', message: 'An API key is required: send Authorization: Bearer tsxt-… or x-api-key' },
  malformedApiKey: { code: 'invalid_api_key', kind: 'authentication', message: 'The API key is malformed' },
  unknownApiKey: { code: 'invalid_api_key', kind: 'authentication', message: 'The API key is not valid' },
  keyCancelled: { code: 'key_cancelled', kind: 'authentication', message: 'The API key has been cancelled' },
  keyExpired: { code: 'key_expired', kind: 'authentication', message: 'The API key has expired' },
  keySuspended: { code: 'key_suspended', kind: 'permission', message: 'The API key is suspended' },
  keyChecksBusy: { code: 'overloaded', kind: 'unavailable', headers: RETRY_SOON, message: 'Too many API keys are being checked at once; retry shortly' },
  accountOverCreditLimit: {
    code: 'credit_limit_reached',
    kind: 'rate_limit',
    headers: NO_RETRY,
    message: "The account's monthly credit limit has been reached; all its keys are suspended",
  },
  callOverCreditLimit: {
    code: 'credit_limit_reached',
    kind: 'rate_limit',
    headers: NO_RETRY,
    message: (p: { worst: string; remaining: string; currency: string }) =>
      `The account's monthly credit limit cannot cover this call: its worst case (${p.worst} ${p.currency}: its input, what its tools and references may add, and max_tokens at the output price) exceeds the ${p.remaining} ${p.currency} not yet used or reserved (the limit less month-to-date usage and the calls in flight); a smaller max_tokens or prompt may fit`,
  },
  keyRateLimited: {
    code: 'rate_limited',
    kind: 'rate_limit',
    // The official clients retry it after retry-after (set per refusal: when the minute ends, or 1 s for concurrency).
    headers: { 'x-should-retry': 'true' },
    message: (p: { budget: string; seconds: number }) => `This API key's rate limit of ${p.budget} is reached; retry in ${p.seconds} s`,
  },
  tooManyTokenCounts: {
    code: 'too_many_requests',
    kind: 'rate_limit',
    headers: RETRY_SOON,
    message: (max: number) => `At most ${max} token counts per API key run at once; retry when one has finished`,
  },

  // ---- data plane: models, routing, upstreams, stored responses (a stored object another account owns is as unknown
  // as one that never existed: a 404 in OpenAI's shape, `invalid_request_error` naming the parameter)
  modelNotFound: {
    code: 'model_not_found',
    kind: 'not_found',
    field: 'model',
    message: (model: string) => `model "${model}" not found (neither a model nor an alias of one)`,
  },
  modelNotListed: { code: 'model_not_found', kind: 'not_found', message: (model: string) => `model "${model}" not found` },
  modelNotInScope: { code: 'model_not_in_scope', kind: 'permission', field: 'model', message: (model: string) => `this API key may not call model ${model}` },
  invalidCursor: {
    code: 'invalid_cursor',
    kind: 'invalid_request',
    message: (p: { param: string; id: string }) => `${p.param} "${p.id}" is not a model in this list`,
  },
  untranslatableField: {
    code: 'untranslatable_field',
    kind: 'invalid_request',
    message: (p: { field: string; protocol: string; reason: string }) =>
      `${p.field}: the chosen deployment speaks the ${p.protocol} protocol, which cannot honour this (${p.reason})`,
  },
  contextTooLarge: {
    code: 'context_too_large',
    kind: 'payload_too_large',
    message: (p: { total: number; limit: number }) => `the request with its stored context is ${p.total} bytes; the body limit of ${p.limit} bytes holds both`,
  },
  responseNotFound: {
    code: 'response_not_found',
    kind: 'invalid_request',
    status: 404,
    field: 'response_id',
    message: (id: string) => `Response with id '${id}' not found.`,
  },
  previousResponseNotFound: {
    code: 'previous_response_not_found',
    kind: 'invalid_request',
    status: 404,
    field: 'previous_response_id',
    message: (id: string) => `Previous response with id '${id}' not found.`,
  },
  conversationNotFound: {
    code: 'conversation_not_found',
    kind: 'invalid_request',
    status: 404,
    field: 'conversation',
    message: (id: string) => `Conversation with id '${id}' not found.`,
  },
  itemNotFound: { code: 'item_not_found', kind: 'invalid_request', status: 404, field: 'item_id', message: (id: string) => `Item with id '${id}' not found.` },
  clientClosed: { code: 'client_closed', kind: 'invalid_request', status: 499, message: 'client closed the request' },
  upstreamsRateLimited: {
    code: 'rate_limit_exceeded',
    kind: 'rate_limit',
    message: (p: { tier: string; seconds: number }) => `every upstream deployment of the ${p.tier} tier is rate limited; retry in ${p.seconds} s`,
  },
  upstreamRejected: { code: 'upstream_rejected', kind: 'invalid_request', message: (detail: string) => `upstream rejected the request: ${detail}` },
  upstreamNotFound: { code: 'upstream_rejected', kind: 'not_found', message: (detail: string) => `upstream rejected the request: ${detail}` },
  upstreamOverloaded: { code: 'upstream_overloaded', kind: 'unavailable', status: 529, message: 'every upstream deployment is overloaded; retry shortly' },
  upstreamUnavailable: { code: 'upstream_unavailable', kind: 'upstream', message: (reason: string) => `no upstream deployment answered (${reason})` },
  upstreamFailedAnswering: { code: 'upstream_failed', kind: 'upstream', message: (detail: string) => `the upstream failed while answering: ${detail}` },
  upstreamFailedMidStream: { code: 'upstream_failed', kind: 'upstream', message: (detail: string) => `the upstream failed mid-stream: ${detail}` },
  replyFailed: {
    code: 'reply_failed',
    kind: 'internal',
    message: 'The gateway could not write the reply to this call; it is metered as failed, not as answered',
  },
  meteringUnavailable: {
    code: 'metering_unavailable',
    kind: 'unavailable',
    headers: RETRY_SOON,
    message: 'Metering is unavailable (the usage record could not be committed), so the call was not answered; retry shortly',
  },
  guardrailRuleDuplicate: { code: 'guardrail_rule_duplicate', kind: 'internal', message: (rule: string) => `Duplicate guardrail rule "${rule}"` },

  // ---- control plane: sessions, roles, limits
  missingSession: { code: 'missing_session', kind: 'authentication', message: 'A console session token is required (Authorization: Bearer …)' },
  invalidSession: { code: 'invalid_session', kind: 'authentication', message: 'The session token is invalid or has expired' },
  invalidCredentials: { code: 'invalid_credentials', kind: 'authentication', message: 'E-mail or password is wrong' },
  loginThrottled: { code: 'login_throttled', kind: 'rate_limit', message: 'Too many failed logins; try again later' },
  readOnlyRole: { code: 'read_only_role', kind: 'permission', message: 'The viewer role can read but not change anything' },
  ownerOnly: { code: 'owner_only', kind: 'permission', message: "Only the account's owner may purge its stored responses" },
  controlPlaneBusy: { code: 'control_plane_busy', kind: 'unavailable', headers: RETRY_SOON, message: 'The control plane is busy; retry shortly' },
  controlPlaneQueueFull: {
    code: 'too_many_requests',
    kind: 'rate_limit',
    headers: RETRY_SOON,
    message: (p: { running: number; waiting: number }) =>
      `At most ${p.running} control-plane requests per account run at once and ${p.waiting} wait; retry when one has finished`,
  },
  controlPlaneTimeout: {
    code: 'control_plane_timeout',
    kind: 'unavailable',
    headers: RETRY_SOON,
    message: (ms: number) =>
      `The request's database work did not finish within ${ms} ms (GATEWAY_CONTROL_PLANE_TIMEOUT_MS); ask for less (a shorter range, a smaller page) or retry later`,
  },
  queryTooLarge: {
    code: 'query_too_large',
    kind: 'invalid_request',
    field: 'query',
    message: (tokens: number) =>
      `A GraphQL document sent without a console session may hold at most ${tokens} tokens; sign in (Authorization: Bearer …) to send larger ones`,
  },
  queryTooDeep: { code: 'query_too_deep', kind: 'invalid_request', message: (p: { depth: number; max: number }) => `The query is ${p.depth} levels deep; at most ${p.max} are allowed` },
  tooManyAliases: {
    code: 'too_many_aliases',
    kind: 'invalid_request',
    message: (p: { field: string; max: number }) =>
      `${p.field}: asked for more than ${p.max} times in one request (aliases, repeats or fragments); a field may appear at most ${p.max} times`,
  },
  queryTooCostly: {
    code: 'query_too_costly',
    kind: 'invalid_request',
    message: (p: { max: number; roundTrip: number }) =>
      `The query would cost more than ${p.max} (each field 1, each database round trip ${p.roundTrip}, × the page sizes they repeat under); ask for fewer aliases, fields or items per page`,
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof ERRORS;

/** What `appError(name, …)` takes after the name: the message's parameters, if it has any, then options for this one error. */
export type ErrorArgs<N extends ErrorName> = (typeof ERRORS)[N]['message'] extends (params: infer P) => string
  ? [params: P, options?: AppErrorOptions]
  : [options?: AppErrorOptions];

/** The catalogue's error `name`; options add to (headers) or override (field, status) what the entry declares. */
export function appError<N extends ErrorName>(name: N, ...args: ErrorArgs<N>): AppError {
  const entry: ErrorEntry = ERRORS[name];
  const parameterised = typeof entry.message === 'function';
  const message = parameterised ? (entry.message as (params: unknown) => string)(args[0]) : (entry.message as string);
  const options = (parameterised ? args[1] : args[0]) as AppErrorOptions | undefined;
  const field = options?.field ?? entry.field;
  const status = options?.status ?? entry.status;
  const headers = entry.headers === undefined ? options?.headers : { ...entry.headers, ...options?.headers };
  return new AppError(entry.kind, entry.code, message, {
    ...(field === undefined ? {} : { field }),
    ...(status === undefined ? {} : { status }),
    ...(headers === undefined ? {} : { headers }),
    ...(options?.cause === undefined ? {} : { cause: options.cause }),
  });
}
