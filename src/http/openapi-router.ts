import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { OpenAPIBackend, type ValidationResult } from 'openapi-backend';
import { AppError } from '../errors';

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
}

export function mountOperations(app: FastifyInstance, options: MountOptions): void {
  const { api } = options.contract;
  const known = new Set(options.contract.operationIds);
  const orphans = Object.keys(options.handlers).filter((id) => !known.has(id));
  const missing = [...known].filter((id) => !(id in options.handlers));
  if (orphans.length > 0 || missing.length > 0) {
    throw new Error(`OpenAPI handlers out of step: missing [${missing.join(', ')}], orphaned [${orphans.join(', ')}]`);
  }
  for (const operation of api.getOperations()) {
    const operationId = operation.operationId!;
    const handler = options.handlers[operationId]!;
    const skipBody = options.domainValidatedBodies?.includes(operationId) ?? false;
    app.route({
      method: operation.method.toUpperCase() as HTTPMethods,
      url: operation.path.replace(/\{([^}]+)\}/g, ':$1'),
      handler: async (request, reply) => {
        const params = (request.params ?? {}) as Record<string, string>;
        const query = { ...((request.query ?? {}) as Record<string, string | string[]>) };
        const result = api.validateRequest(
          {
            method: request.method,
            path: request.url.split('?')[0]!,
            headers: request.headers as Record<string, string | string[]>,
            query,
            body: skipBody ? undefined : request.body,
            params,
          },
          operation,
        );
        if (!result.valid && result.errors && result.errors.length > 0) {
          const relevant = skipBody ? result.errors.filter((e) => !e.instancePath.startsWith('/requestBody') && fieldOf(e) !== 'requestBody') : result.errors;
          const first = relevant[0];
          if (first) {
            const { field, message } = describeValidationError(first);
            throw new AppError('invalid_request', 'invalid_field', message, { field });
          }
        }
        const coerced = (result.coerced as { query?: Record<string, unknown> } | undefined)?.query;
        return handler({ request, reply, params, query: coerced ?? query, body: request.body });
      },
    });
  }
}
