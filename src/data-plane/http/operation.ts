// What a data-plane operation sees of a request and does with its reply, the
// same on both adapters of the lifecycle (lifecycle.ts): the node:http fast
// path and the Fastify scope.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { appError } from '../../errors';
import type { HttpDrain } from '../../http/drain';
import type { OperationContext } from '../../http/openapi-router';
import type { CallContext } from '../call';
import type { ProtocolForm } from '../../core/canonical';
import type { AuthenticatedKey } from '../key-auth';
import type { RouteErrorForm } from './error-envelopes';

/** What a data-plane handler sees of a request. Fastify's request is one; the fast path makes its own. */
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

/** An operation's context as the REST router gives it (checked against the contract), with the data plane's own request and reply. */
export interface DataPlaneOperationContext extends Omit<OperationContext, 'request' | 'reply'> {
  request: CallRequest;
  reply: CallReply;
}

/** A data-plane operation's handler; its result, unless it replied itself, is sent as the 200 JSON body. */
export type DataPlaneHandler = (ctx: DataPlaneOperationContext) => Promise<unknown>;

/** A data-plane operation: its handler, and the error form its replies take (its codec's). */
export interface DataPlaneOperation {
  readonly errors: RouteErrorForm;
  readonly handle: DataPlaneHandler;
}

export function authenticatedKey(request: CallRequest): AuthenticatedKey {
  if (!request.apiKey) throw appError('missingApiKey');
  return request.apiKey;
}

/**
 * Per-call context. The AbortSignal fires when the client goes away before the
 * reply is done, or with a `shutting_down` AppError as its reason when the
 * gateway's shutdown grace period runs out while the call is still running.
 */
export function callContext(request: CallRequest, reply: CallReply, form: ProtocolForm): CallContext {
  const controller = new AbortController();
  const unsubscribe = request.drain?.onCut(() => controller.abort(appError('shuttingDown')));
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

/** A form's handlers as operations, all answering errors in that form. */
export function operationsIn(errors: RouteErrorForm, handlers: Record<string, DataPlaneHandler>): Record<string, DataPlaneOperation> {
  const operations: Record<string, DataPlaneOperation> = {};
  for (const [operationId, handle] of Object.entries(handlers)) operations[operationId] = { errors, handle };
  return operations;
}
