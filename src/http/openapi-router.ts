import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { OpenAPIBackend, type ValidationResult } from 'openapi-backend';
import { appError } from '../errors';
import { unstorableError, unstorableText } from './storable-text';

// The OpenAPI files are the routing table: every operation becomes a Fastify
// route whose request is validated against the contract before the handler
// keyed by its operationId runs. A missing or orphaned handler stops start-up.

type ErrorObject = NonNullable<ValidationResult['errors']>[number];

export interface OperationContext {
  request: FastifyRequest;
  reply: FastifyReply;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

export type OperationHandler = (ctx: OperationContext) => Promise<unknown>;

export interface OpenApiContract {
  api: OpenAPIBackend;
  operationIds: string[];
}

export async function loadContract(definitionPath: string): Promise<OpenApiContract> {
  const api = new OpenAPIBackend({
    definition: definitionPath,
    strict: true,
    validate: true,
    coerceTypes: true,
    ajvOpts: {
      allErrors: false,
      strict: false,
      // The formats our contracts use; dates are also checked by the domain.
      formats: { 'date-time': true, date: /^\d{4}-\d{2}-\d{2}$/, email: true, password: true },
    },
  });
  // openapi-backend checks the document against the OpenAPI 3.0 meta-schema
  // only, which refuses the JSON Schema keywords 3.1 allows (`if`/`then`, used
  // to check the block kinds the gateway reads while letting later kinds
  // through). The contracts are checked against 3.1 by `npm run lint`
  // (Redocly), and ajv compiles every schema below, failing start-up on a
  // broken one; so this one check is skipped, not the others.
  api.validateDefinition = () => api.document;
  await api.init();
  return { api, operationIds: api.getOperations().map((o) => o.operationId ?? '') };
}

/** `messages.0.role` from ajv's `/requestBody/messages/0/role`; `max_tokens` for a missing property. */
export function fieldOf(error: ErrorObject): string {
  const segments = error.instancePath.split('/').filter(Boolean).slice(1);
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') segments.push(error.params.missingProperty);
  if (error.keyword === 'additionalProperties' && typeof error.params.additionalProperty === 'string') {
    segments.push(error.params.additionalProperty);
  }
  return segments.join('.') || 'body';
}

export function describeValidationError(error: ErrorObject): { field: string; message: string } {
  const field = fieldOf(error);
  switch (error.keyword) {
    case 'required':
      return { field, message: `${field}: Field required` };
    case 'enum':
      return { field, message: `${field}: must be one of ${(error.params.allowedValues as unknown[]).map(String).join(', ')}` };
    case 'additionalProperties':
      return { field, message: `${field}: unknown field` };
    default:
      return { field, message: `${field}: ${error.message ?? 'is invalid'}` };
  }
}

export interface MountOptions {
  contract: OpenApiContract;
  handlers: Record<string, OperationHandler>;
  /** Skip schema validation of the body for these operations (the domain validates them). */
  domainValidatedBodies?: readonly string[];
  /** Refuse U+0000 and unpaired surrogates anywhere in a JSON body: everything in it may be stored as PostgreSQL text or jsonb, which cannot hold them. */
  storableBodies?: boolean;
}

/** Deepest nesting a JSON body may have: enough for any real tool schema, far from what recursive code (JSON.stringify, scanners) can take. */
export const MAX_BODY_DEPTH = 100;

/** The path of the first spot nested deeper than `max` levels; iterative, for bodies deeper than the stack. */
export function tooDeep(value: unknown, max = MAX_BODY_DEPTH): string | undefined {
  // Every data-plane body passes here: the common case only counts levels, paths are built for a refusal.
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const [current, depth] = item;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return deepPath(value, max);
    for (const child of Object.values(current)) if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
  }
  return undefined;
}

function deepPath(value: unknown, max: number): string {
  const pending: Array<[unknown, string, number]> = [[value, '', 0]];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const [current, path, depth] = item;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return path || 'body';
    for (const [key, child] of Object.entries(current)) pending.push([child, path ? `${path}.${key}` : key, depth + 1]);
  }
  return 'body';
}

type Operation = ReturnType<OpenAPIBackend['getOperations']>[number];
type ValidateFunction = NonNullable<ReturnType<OpenAPIBackend['validator']['getRequestValidatorsForOperation']>>[number];

/** The media type of a Content-Type header, lower-case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/**
 * The operation's request check with openapi-backend's own compiled ajv
 * validators, fed from what Fastify has already parsed: the route is matched,
 * headers are lower-case, the query is split and the JSON body parsed, so
 * `api.validateRequest` (which re-matches the path and re-parses it all, a
 * visible share of the gateway's CPU per call) would only repeat that work. Same
 * parameter object, same schemas, same coercion (query and path values are
 * coerced in place). Returns the first error, if any.
 */
function requestValidator(
  api: OpenAPIBackend,
  operation: Operation,
  skipBody: boolean,
): (request: CheckedRequest, params: Record<string, string>, query: Record<string, unknown>) => ErrorObject | undefined {
  const validators = api.validator.getRequestValidatorsForOperation(operation.operationId!) ?? [];
  const isBodyValidator = (v: ValidateFunction) => 'requestBody' in ((v.schema as { properties?: object } | undefined)?.properties ?? {});
  const checks = skipBody ? validators.filter((v) => !isBodyValidator(v)) : validators;
  const parameters = (operation.parameters ?? []) as Array<{ in: string; name: string; schema?: { type?: string } }>;
  if (parameters.some((p) => p.in === 'cookie')) throw new Error(`${operation.operationId}: cookie parameters are not supported`);
  // A single value of an array-typed query parameter becomes a one-item array, as openapi-backend does.
  const arrayQuery = parameters.filter((p) => p.in === 'query' && p.schema?.type === 'array').map((p) => p.name);
  return (request, params, query) => {
    for (const name of arrayQuery) if (typeof query[name] === 'string') query[name] = [query[name]];
    const input: Record<string, unknown> = { path: params, query, header: request.headers };
    if (typeof request.body === 'object' || mediaType(request.headers['content-type']) === 'application/json') input.requestBody = request.body;
    for (const check of checks) {
      if (!check(input)) return check.errors?.[0];
    }
    return undefined;
  };
}

/** What an operation's request check reads: Fastify's request, or the data plane's fast path. */
export interface CheckedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

/** Throws the AppError (400, naming the field) for the first thing wrong with an operation's request; query and path values are coerced in place. */
export type OperationCheck = (request: CheckedRequest, params: Record<string, string>, query: Record<string, unknown>) => void;

/** Every operation's request check, by operationId. */
export function operationChecks(
  contract: OpenApiContract,
  options: Pick<MountOptions, 'domainValidatedBodies' | 'storableBodies'> = {},
): Map<string, OperationCheck> {
  const checks = new Map<string, OperationCheck>();
  for (const operation of contract.api.getOperations()) {
    const operationId = operation.operationId!;
    const validate = requestValidator(contract.api, operation, options.domainValidatedBodies?.includes(operationId) ?? false);
    checks.set(operationId, (request, params, query) => {
      const deep = tooDeep(request.body);
      if (deep !== undefined) {
        throw appError('bodyTooDeep', { field: deep, max: MAX_BODY_DEPTH, what: 'body' }, { field: deep });
      }
      // Path and query values end up in SQL parameters, which cannot carry U+0000.
      const badParam = unstorableText(params) ?? unstorableText(query);
      if (badParam !== undefined) throw unstorableError(badParam);
      if (options.storableBodies) {
        const badInBody = unstorableText(request.body);
        if (badInBody !== undefined) throw unstorableError(badInBody);
      }
      const first = validate(request, params, query);
      if (first) {
        const { field, message } = describeValidationError(first);
        throw appError('invalidField', message, { field });
      }
    });
  }
  return checks;
}

/** Stops start-up unless every operation of the contract has a handler and every handler an operation. */
export function checkHandlers(contract: OpenApiContract, handlers: Record<string, unknown>): void {
  const known = new Set(contract.operationIds);
  const orphans = Object.keys(handlers).filter((id) => !known.has(id));
  const missing = [...known].filter((id) => !(id in handlers));
  if (orphans.length > 0 || missing.length > 0) {
    throw new Error(`OpenAPI handlers out of step: missing [${missing.join(', ')}], orphaned [${orphans.join(', ')}]`);
  }
}

export function mountOperations(app: FastifyInstance, options: MountOptions): void {
  const { api } = options.contract;
  checkHandlers(options.contract, options.handlers);
  const checks = operationChecks(options.contract, options);
  for (const operation of api.getOperations()) {
    const operationId = operation.operationId!;
    const handler = options.handlers[operationId]!;
    const check = checks.get(operationId)!;
    app.route({
      method: operation.method.toUpperCase() as HTTPMethods,
      url: operation.path.replace(/\{([^}]+)\}/g, ':$1'),
      handler: async (request, reply) => {
        const params = (request.params ?? {}) as Record<string, string>;
        const query = { ...((request.query ?? {}) as Record<string, string | string[]>) };
        check(request, params, query);
        return handler({ request, reply, params, query, body: request.body });
      },
    });
  }
}
