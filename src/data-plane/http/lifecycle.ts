// The data plane's one request lifecycle:
//   request id → key → body → parse → contract → handler → envelope → log/metrics
// Two thin adapters drive it. The node:http fast path (fast-path.ts) takes
// the ordinary calls (a POST of a JSON body of declared length to a fixed
// path); the Fastify scope (data-plane.ts) takes the rest (chunked, empty,
// oversized or non-JSON bodies, paths with parameters, a closing server). The
// request id, body budget, JSON parser and access log line are the server's
// (src/http/server.ts), shared by both; the key check, the contract check,
// the handler call, the error envelope and the failure log are here.
import type { Logger } from 'pino';
import { reportedError } from '../../errors';
import { checkHandlers, operationChecks, type CheckedRequest, type OpenApiContract, type OperationCheck } from '../../http/openapi-router';
import type { AuthenticatedKey, KeyAuthenticator } from '../key-auth';
import { errorFormOf, sendError, type RouteErrorForm } from './error-envelopes';
import type { CallReply, CallRequest, DataPlaneHandler, DataPlaneOperation } from './operation';

/** One operation of the data-plane contract, as both adapters route it. */
export interface DataPlaneRoute {
  readonly operationId: string;
  /** Upper case, as on the wire. */
  readonly method: string;
  /** The contract's path, parameters in braces: `/v1/responses/{response_id}`. */
  readonly path: string;
  /** The error form of its replies, its codec's. */
  readonly errors: RouteErrorForm;
  readonly check: OperationCheck;
  readonly handle: DataPlaneHandler;
}

export interface LifecycleDeps {
  contract: OpenApiContract;
  keyAuth: KeyAuthenticator;
  /** One per operationId of the contract; start-up stops on a missing or orphaned one. */
  operations: Record<string, DataPlaneOperation>;
}

/** A request at the handler step: its key checked, its body parsed. */
export type ParsedRequest = CallRequest & CheckedRequest;

export class DataPlaneLifecycle {
  readonly routes: readonly DataPlaneRoute[];

  constructor(private readonly deps: LifecycleDeps) {
    checkHandlers(deps.contract, deps.operations);
    const checks = operationChecks(deps.contract);
    this.routes = deps.contract.api.getOperations().map((operation) => {
      const operationId = operation.operationId!;
      const { errors, handle } = deps.operations[operationId]!;
      return { operationId, method: operation.method.toUpperCase(), path: operation.path, errors, check: checks.get(operationId)!, handle };
    });
  }

  /**
   * The key step, before the body is read: a caller without a valid key gets
   * its 401 without the gateway buffering (or budgeting for) what it sends,
   * and learns nothing about the schema.
   */
  authenticate(headers: CallRequest['headers']): Promise<AuthenticatedKey> {
    return this.deps.keyAuth.authenticate(headers);
  }

  /** Contract check, then the handler; its result, unless it replied itself, is the 200 JSON body. */
  async answer(route: DataPlaneRoute, request: ParsedRequest, reply: CallReply, params: Record<string, string>, query: Record<string, unknown>): Promise<void> {
    route.check(request, params, query);
    const result = await route.handle({ request, reply, params, query, body: request.body });
    if (result !== undefined && result !== reply && !reply.sent) reply.send(result);
  }

  /**
   * A failed request at any step: its error in the route's form, unless the
   * reply has begun (a stream reports its own failure); a failure on the
   * gateway's side is logged once, with the request id (`requestId` when the
   * logger does not carry it).
   */
  fail(route: DataPlaneRoute, request: Pick<CallRequest, 'id' | 'headers'>, reply: CallReply, error: unknown, log: Pick<Logger, 'error'>, requestId?: string): void {
    const appError = reportedError(error, log, 'data-plane request failed', requestId);
    if (reply.sent || reply.raw.headersSent) return;
    sendError(reply, errorFormOf(route.errors, request.headers), appError, request.id);
  }
}
