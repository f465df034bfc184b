import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, {
  LogController,
  type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { newId } from '../db/ids';
import { appError, type AppError } from '../errors';
import { Transform, type TransformCallback } from 'node:stream';
import { BODY_LIMIT, PRE_AUTH_BODY, bodyTooLarge, type BodyAllowance } from './body-allowance';
import type { BodyBudget, BodyShare } from './body-budget';
import type { ClientAddresses } from '../core/client-address';
import { parseJsonBody } from './json-body';

/** Answers a request no route can take, in the error form of the surface its path belongs to. */
export type UnroutableHandler = (request: FastifyRequest, reply: FastifyReply, error: AppError) => void;

export interface ServerOptions {
  /** Malformed URLs and over-long path parameters, refused by the router before any route or hook runs. */
  onUnroutable?: UnroutableHandler;
  /** Request-body bytes that may be in flight at once (see body-budget.ts). */
  budget: BodyBudget;
  /**
   * Looked at first for every request: a route that serves its ordinary
   * requests without Fastify (the data plane's calls) says true. Filled in
   * once the routes exist.
   */
  fastPath?: { tryServe?: (request: IncomingMessage, response: ServerResponse) => boolean };
  /** Headers every reply carries, on both paths and on streams (a cluster worker's id). */
  replyHeaders?: Record<string, string>;
  /** How long a client may take to send the request line and headers (GATEWAY_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs?: number;
  /** How long a client may take to send a whole request, body included (GATEWAY_REQUEST_TIMEOUT_MS); replies may stream longer. */
  requestTimeoutMs?: number;
  /**
   * Who a request is from (GATEWAY_TRUSTED_PROXIES, see client-address.ts):
   * `request.ip`, and the client whose bodies in flight are counted. Unset:
   * the socket's address, whatever X-Forwarded-For says.
   */
  clientAddresses?: ClientAddresses;
}

/** A request URL without its query string. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** The one access-log line per answered request; `requestId` when the logger does not carry it already. */
export function logRequestCompleted(log: Pick<Logger, 'info'>, method: string, url: string, status: number, ms: number, requestId?: string): void {
  const line = { method, url: pathOf(url), status, ms: Math.round(ms) };
  log.info(requestId === undefined ? line : { request_id: requestId, ...line }, 'request completed');
}

/** Fastify's own keep-alive default, kept now that the server is ours. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 15_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** How often Node checks connections against those timeouts (its default, 30 s, would let a slow client hold a socket 30 s longer). */
const TIMEOUT_CHECK_MS = 1_000;
/** A request line longer than this in a header overflow is answered 414 rather than 431. */
const LONG_REQUEST_LINE = 8 * 1024;

/**
 * Requests Node's HTTP parser refuses before any handler sees them (request
 * line or headers too large, headers or body not sent in time, not HTTP)
 * answer in the gateway's error envelope rather than Node's bare status line.
 * Whose surface the request was for is unknown here, so the body carries both
 * the Anthropic form (`type: error`) and the code the other surfaces use.
 */
function answerClientError(error: { code?: string; rawPacket?: unknown }, socket: Duplex): void {
  if (answered.has(socket)) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  let status = 400;
  let code = 'malformed_request';
  let message = 'The request is not valid HTTP';
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    // Node hands the bytes parsed so far as a Buffer (Fastify's type says otherwise).
    const packet = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1') : '';
    const lineEnd = packet.indexOf('\r\n');
    if (lineEnd < 0 || lineEnd > LONG_REQUEST_LINE) [status, code, message] = [414, 'uri_too_long', 'The request URL is too long'];
    else [status, code, message] = [431, 'headers_too_large', 'The request headers are too large (16 KB at most, request line included)'];
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    [status, code, message] = [408, 'request_timeout', 'The request was not sent in time'];
  }
  const body = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  lingerThenClose(socket);
}

/** Sockets answered by answerClientError: the parser reports an error again for each later chunk of the same request. */
const answered = new WeakSet<Duplex>();
/** How long an answered socket may go on sending the refused request before it is cut off. */
const LINGER_MS = 2_000;

/**
 * A lingering close (RFC 9112 §9.6): the client is usually still sending the
 * rest of the request the parser refused (a 70 KB URL). A socket destroyed
 * with that input unread makes the kernel send a reset, which on Node 24
 * reached the client right behind the 414 (ECONNRESET). So the rest is read
 * and dropped until the client is done, for LINGER_MS at most.
 */
function lingerThenClose(socket: Duplex): void {
  answered.add(socket);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

function frameworkAppError(error: FastifyError): AppError {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return appError('pathParameterTooLong');
  }
  return appError('malformedUrl');
}

/**
 * The HTTP server: one request id per request (`req_…`), echoed as
 * `request-id` (Anthropic form) and `x-request-id` (OpenAI form) on every
 * reply and bound to every log line of the request.
 */
export function createServer(logger: Logger, options: ServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    genReqId: () => newId('req'),
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // The most any route takes; each request's own allowance (body-allowance.ts) is checked first.
    bodyLimit: BODY_LIMIT,
    // Fastify's own handler (its default) would run beside ours and destroy the socket we are answering on.
    clientErrorHandler: answerClientError,
    ...(options.clientAddresses?.trust ? { trustProxy: options.clientAddresses.trust } : {}),
    serverFactory: (handler) => {
      const fastPath = options.fastPath;
      const replyHeaders = Object.entries(options.replyHeaders ?? {});
      const server = http.createServer(
        {
          // Node refuses a headers timeout longer than the request timeout.
          headersTimeout: Math.min(options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
          requestTimeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
          connectionsCheckingInterval: TIMEOUT_CHECK_MS,
        },
        (request, response) => {
          for (const [name, value] of replyHeaders) response.setHeader(name, value);
          if (fastPath?.tryServe?.(request, response) !== true) handler(request, response);
        },
      );
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      return server;
    },
    // Official clients add `?beta=true`; routes match on the path only.
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: false,
    // Without this Fastify answers these in its own body shape, skipping the hooks (no request-id either).
    frameworkErrors: (error, request, reply) => {
      const answer = reply as FastifyReply;
      void answer.header('request-id', request.id).header('x-request-id', request.id);
      const appError = frameworkAppError(error);
      if (options.onUnroutable) options.onUnroutable(request, answer, appError);
      else void answer.code(appError.status).send({ error: { code: appError.code, message: appError.message } });
    },
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  const { budget } = options;
  // Callback-style hooks: they run on every request, and an async hook costs a promise and a microtask hop each.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('request-id', request.id);
    reply.header('x-request-id', request.id);
    done();
  });
  app.decorateRequest('bodyAllowance', null);
  // The body's bytes are counted against the budget as the parser reads them
  // (see body-budget.ts), and against the request's allowance, which its
  // route's onRequest hook set from the credential before any byte was read.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const { headers } = request;
    const declared = Number(headers['content-length']);
    if (headers['transfer-encoding'] === undefined && !(declared > 0)) {
      done(null, payload);
      return;
    }
    const allowance = request.bodyAllowance ?? PRE_AUTH_BODY;
    if (declared > allowance.limitBytes) {
      done(bodyTooLarge(allowance));
      return;
    }
    let share: BodyShare;
    try {
      share = budget.open({ address: request.ip, credentialed: allowance.credentialed }, reply.raw);
    } catch (error) {
      done(error as AppError);
      return;
    }
    const body = new BudgetedBody(share, allowance);
    // pipe() does not pass on a client that went away mid-body; the parser must hear of it.
    payload.once('error', (error) => body.destroy(error));
    done(null, payload.pipe(body));
  });
  app.addHook('onResponse', (request, reply, done) => {
    logRequestCompleted(request.log, request.method, request.url, reply.statusCode, reply.elapsedTime);
    done();
  });
  return app;
}

/**
 * The request body as Fastify's parser reads it, each chunk counted against
 * the request's allowance (413 past it) and the budget (503 past it); either
 * way the stream fails and reads no further. `receivedEncodedLength` is what
 * Fastify compares with Content-Length.
 */
class BudgetedBody extends Transform {
  receivedEncodedLength = 0;

  constructor(
    private readonly share: BodyShare,
    private readonly allowance: BodyAllowance,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.receivedEncodedLength + chunk.length > this.allowance.limitBytes) {
      callback(bodyTooLarge(this.allowance));
      return;
    }
    const refusal = this.share.take(chunk.length);
    if (refusal !== undefined) {
      callback(refusal);
      return;
    }
    this.receivedEncodedLength += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.share.received();
    callback();
  }
}
