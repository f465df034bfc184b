import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { AppError, toAppError } from '../../errors';
import { mountOperations, type OpenApiContract, type OperationContext } from '../../http/openapi-router';
import { fromFastify } from '../../control-plane/rest/rest-errors';
import type { AuthenticatedKey, KeyAuthenticator } from '../key-auth';
import type { CallContext } from '../call';
import type { ProtocolForm } from '../../core/canonical';
import { KEYED_BODY } from '../../http/body-allowance';
import type { HttpDrain } from '../../http/drain';
import { errorFormFor } from './error-envelopes';
import { sendError } from './serve-call';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
    /** The server's drain, so a call can be cut when the shutdown grace period runs out. */
    readonly drain: HttpDrain | null;
  }
}

/**
 * What a data-plane handler sees of a request. Fastify's request is one; the
 * fast path (fast-path.ts) makes its own for ordinary calls.
 */
export interface CallRequest {
  readonly id: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly apiKey: AuthenticatedKey | null;
  readonly drain: HttpDrain | null;
}

/** What a data-plane handler does with a reply: Fastify's reply, or the fast path's own. */
export interface CallReply {
  readonly raw: ServerResponse;
  readonly sent: boolean;
  code(status: number): CallReply;
  header(name: string, value: string): CallReply;
  headers(values: Record<string, string>): CallReply;
  /** A JSON body (an object) or a string already serialised. */
  send(payload: unknown): unknown;
  /** The handler writes to `raw` itself from here on (streams). */
  hijack(): unknown;
}

/** An operation's context as the REST router gives it, with the data plane's own request and reply. */
export interface DataPlaneOperationContext extends Omit<OperationContext, 'request' | 'reply'> {
  request: CallRequest;
  reply: CallReply;
}

/** A data-plane operation; its result, unless it replied itself, is sent as the 200 JSON body. */
export type DataPlaneHandler = (ctx: DataPlaneOperationContext) => Promise<unknown>;

export interface DataPlaneDeps {
  contract: OpenApiContract;
  keyAuth: KeyAuthenticator;
  handlers: Record<string, DataPlaneHandler>;
  drain: HttpDrain;
}

export function authenticatedKey(request: CallRequest): AuthenticatedKey {
  if (!request.apiKey) throw new AppError('authentication', 'missing_api_key', 'An API key is required');
  return request.apiKey;
}

/**
 * Per-call context. The AbortSignal fires when the client goes away before the
 * reply is done, or with a `shutting_down` AppError as its reason when the
 * gateway's shutdown grace period runs out while the call is still running.
 */
export function callContext(request: CallRequest, reply: CallReply, form: ProtocolForm): CallContext {
  const controller = new AbortController();
  const unsubscribe = request.drain?.onCut(() =>
    controller.abort(
      new AppError('unavailable', 'shutting_down', 'The gateway is shutting down and cut this call at the end of its grace period; retry it', {
        headers: { 'retry-after': '1' },
      }),
    ),
  );
  const key = authenticatedKey(request);
  let unwatch: (() => void) | undefined;
  reply.raw.once('close', () => {
    unsubscribe?.();
    unwatch?.();
    if (!reply.raw.writableFinished) controller.abort();
  });
  // A stream ends when its key is suspended or cancelled or its account goes over the credit limit (metered as produced).
  const followKey = (): void => {
    unwatch ??= key.watch?.((refusal) => controller.abort(refusal));
  };
  const length = Number(request.headers['content-length']);
  const bodyBytes = Number.isSafeInteger(length) && length > 0 ? length : undefined;
  return { requestId: request.id, key, form, signal: controller.signal, startedAt: Date.now(), bodyBytes, followKey };
}

export async function installDataPlane(server: FastifyInstance, deps: DataPlaneDeps): Promise<void> {
  await server.register(async (scope) => {
    scope.decorateRequest('apiKey', null);
    // The data plane speaks JSON only: a text/plain body is a 415, not a string handed to the decoders.
    scope.removeContentTypeParser('text/plain');
    scope.decorateRequest('drain', { getter: () => deps.drain });
    // Authenticate before the body is read (chunked bodies come this way): a caller without a
    // valid key gets its 401 without the gateway buffering what it sends, and learns nothing about the schema.
    scope.addHook('onRequest', async (request, reply) => {
      request.apiKey = await deps.keyAuth.authenticate(request.headers).catch((error: unknown) => {
        void reply.header('connection', 'close');
        throw error;
      });
      request.bodyAllowance = KEYED_BODY;
    });
    scope.setErrorHandler((error, request, reply) => {
      const appError = fromFastify(error) ?? toAppError(error);
      if (appError.status >= 500) request.log.error({ err: appError.cause ?? appError }, 'data-plane request failed');
      if (reply.sent || reply.raw.headersSent) return;
      sendError(reply, errorFormFor(request.url, request.headers), appError, request.id);
    });
    mountOperations(scope, { contract: deps.contract, handlers: deps.handlers });
  });
}
