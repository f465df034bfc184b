// The node:http adapter of the data-plane lifecycle (lifecycle.ts): the
// ordinary calls, served without Fastify's request lifecycle. Fastify's
// routing, hook chain, content-type parser, reply pipeline and per-request
// child logger are a visible share of the gateway's CPU per call (README,
// Benchmarks). An ordinary
// call is a POST to one of the data plane's fixed paths with an
// application/json body of a declared length within the body limit, while
// the server is not closing. It takes the same steps in the same order as
// the Fastify scope: request id → key → body budget → JSON body (the server's
// one parser) → contract check → handler → envelope, and on the way out the
// same log line and metrics. Anything else (another path or method, a
// chunked, empty, oversized or non-JSON body, a closing server) is left to
// Fastify untouched.
import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import type { Logger } from 'pino';
import { newId } from '../../db/ids';
import type { BodyBudget, BodyShare } from '../../http/body-budget';
import type { ClientAddresses } from '../../core/client-address';
import type { HttpDrain } from '../../http/drain';
import { parseJsonBody } from '../../http/json-body';
import { mediaType } from '../../http/openapi-router';
import { logRequestCompleted, pathOf } from '../../http/server';
import type { AuthenticatedKey } from '../key-auth';
import type { DataPlaneLifecycle, DataPlaneRoute } from './lifecycle';
import type { CallReply, CallRequest } from './operation';

export interface FastPathDeps {
  lifecycle: DataPlaneLifecycle;
  drain: HttpDrain;
  budget: BodyBudget;
  /** Who sent a request, for the cap on bodies in flight per client. */
  clientAddresses: ClientAddresses;
  logger: Logger;
  /** Largest body taken here; a larger one is Fastify's to refuse (413). */
  bodyLimit: number;
  /** After each reply is sent, as Fastify's onResponse hooks see it (metrics). */
  onResponse?: (url: string, body: unknown, status: number, seconds: number) => void;
}

class FastRequest implements CallRequest {
  apiKey: AuthenticatedKey | null = null;
  body: unknown = undefined;

  constructor(
    readonly id: string,
    readonly url: string,
    readonly headers: IncomingMessage['headers'],
    readonly drain: HttpDrain,
  ) {}
}

/** Fastify's reply in what the data plane uses of it: headers gathered, then one write of status, headers and JSON body. */
class FastReply implements CallReply {
  private status = 200;
  private readonly pending: Record<string, string> = {};
  private done = false;
  hijacked = false;

  constructor(readonly raw: ServerResponse) {}

  get sent(): boolean {
    return this.done || this.hijacked;
  }

  code(status: number): this {
    this.status = status;
    return this;
  }

  header(name: string, value: string): this {
    this.pending[name.toLowerCase()] = value;
    return this;
  }

  headers(values: Record<string, string>): this {
    for (const name in values) this.header(name, values[name]!);
    return this;
  }

  hijack(): this {
    this.hijacked = true;
    return this;
  }

  send(payload: unknown): this {
    if (this.sent) return this;
    this.done = true;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const type = this.pending['content-type'];
    // As Fastify: JSON goes out as UTF-8 and says so.
    if (type === undefined) this.pending['content-type'] = typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
    else if (type.includes('json') && !/;\s*charset=/i.test(type)) this.pending['content-type'] = `${type}; charset=utf-8`;
    this.pending['content-length'] = String(Buffer.byteLength(text));
    this.raw.writeHead(this.status, this.pending);
    this.raw.end(text);
    return this;
  }
}

/** The fast path's operations have no path parameters. */
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * The body as text, or null when the client went away before it ended. Each
 * chunk is counted against the budget as it arrives; past it the read stops
 * and the promise rejects with the 503.
 */
function readBody(req: IncomingMessage, share: BodyShare): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      const refusal = share.take(chunk.length);
      if (refusal !== undefined) {
        cleanup();
        req.pause();
        reject(refusal);
        return;
      }
      chunks.push(chunk);
      received += chunk.length;
    };
    // Node's parser ends the body after exactly Content-Length bytes; a connection lost earlier is 'close' without 'end'.
    const onEnd = (): void => {
      cleanup();
      share.received();
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
    };
    const onGone = (): void => {
      cleanup();
      resolve(null);
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

export class DataPlaneFastPath {
  /** The POST operations without path parameters, by path. */
  private readonly routes = new Map<string, DataPlaneRoute>();
  private closing = false;
  /** Calls this path has taken on (the rest went to Fastify). */
  served = 0;

  constructor(private readonly deps: FastPathDeps) {
    for (const route of deps.lifecycle.routes) if (route.method === 'POST' && !route.path.includes('{')) this.routes.set(route.path, route);
  }

  /** From now on every request goes to Fastify, which answers new ones 503 while the server closes. */
  close(): void {
    this.closing = true;
  }

  /** Serves `req` if it is an ordinary data-plane call and says so; false leaves it to Fastify, untouched. */
  tryServe(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.closing || req.method !== 'POST') return false;
    const url = req.url ?? '';
    let path = pathOf(url);
    // As the Fastify routes (ignoreTrailingSlash): /v1/messages/ is /v1/messages.
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const route = this.routes.get(path);
    if (route === undefined) return false;
    const { headers } = req;
    if (headers['transfer-encoding'] !== undefined || mediaType(headers['content-type']) !== 'application/json') return false;
    const length = Number(headers['content-length']);
    if (!Number.isSafeInteger(length) || length <= 0 || length > this.deps.bodyLimit) return false;
    this.served++;
    void this.serve(req, res, route, url);
    return true;
  }

  private async serve(req: IncomingMessage, res: ServerResponse, route: DataPlaneRoute, url: string): Promise<void> {
    const started = performance.now();
    const { deps } = this;
    const { lifecycle } = deps;
    const request = new FastRequest(newId('req'), url, req.headers, deps.drain);
    const reply = new FastReply(res);
    res.setHeader('request-id', request.id);
    res.setHeader('x-request-id', request.id);
    const finished = (): void => {
      res.off('finish', finished);
      res.off('error', finished);
      const ms = performance.now() - started;
      logRequestCompleted(deps.logger, 'POST', url, res.statusCode, ms, request.id);
      deps.onResponse?.(url, request.body, res.statusCode, ms / 1000);
    };
    res.on('finish', finished);
    res.on('error', finished);
    try {
      request.apiKey = await lifecycle.authenticate(req.headers);
      const text = await readBody(req, deps.budget.open({ address: deps.clientAddresses.of(req), credentialed: true }, res));
      if (text === null) return;
      request.body = parseJsonBody(text);
      const queryAt = url.indexOf('?');
      const query: Record<string, unknown> = queryAt < 0 ? {} : { ...querystring.parse(url.slice(queryAt + 1)) };
      await lifecycle.answer(route, request, reply, NO_PARAMS, query);
    } catch (error) {
      // A body left unread is not read: the connection closes after the answer.
      if (!req.complete) reply.header('connection', 'close');
      lifecycle.fail(route, request, reply, error, deps.logger, request.id);
    }
  }
}
