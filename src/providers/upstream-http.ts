// The one HTTP exchange every network adapter makes: POST a JSON body, then
// read either a JSON reply or an SSE stream. It owns the three clocks and the
// cancellation rules so each adapter only maps protocol shapes:
// - no response headers within `connectTimeoutMs` → 'timeout';
// - no bytes for `idleTimeoutMs` while reading the body → 'timeout';
// - the caller's signal → 'aborted', and the upstream request is torn down
//   (its socket is destroyed), so an abandoned answer stops costing tokens.
// It also tells the call's SentRequest when the request's bytes were handed
// to the socket: from then on the upstream charges the prompt, so a call cut
// before the first byte is billed for it.
// node:http with a keep-alive Agent per protocol, owned by an UpstreamPool
// (one per process, made by the provider registry). Global fetch (undici)
// was the largest cost in the gateway's CPU profile under load (README,
// Benchmarks): web streams for every body, and a request body written in
// pieces (one syscall each).
// Here the headers and the JSON body leave in one write, and replies are
// read as plain Buffers.
import http from 'node:http';
import https from 'node:https';
import type { ProviderConfig } from '../core/catalog.types';
import { abortedError, UpstreamError } from './provider';
import { retryAfterMs } from './retry-after';
import type { SentRequest } from './sent-request';
import { parseSseStream, type SseEvent } from './sse-parser';

export interface UpstreamHttpRequest {
  url: string;
  /** Exactly the headers to send; the caller's own credentials never belong here. */
  headers: Record<string, string>;
  body: unknown;
  provider: ProviderConfig;
  signal: AbortSignal;
  /** Marked once the request's headers and body were handed to the upstream's socket. */
  sent?: SentRequest;
}

type Cause = 'aborted' | 'connect-timeout' | 'idle-timeout';

/** Longest error body read from an upstream; the message is all we keep. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Errors of a pooled connection the server closed while it sat idle: worth one retry on another. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

interface Target {
  module: typeof http | typeof https;
  agent: http.Agent;
  hostname: string;
  port: string;
  path: string;
}

/**
 * Keep-alive connections to every upstream origin, shared by the adapters
 * of a process. A redirect is never followed (node:http does not): it would
 * carry the provider key to wherever it points, and surfaces as an http error.
 */
export class UpstreamPool {
  private readonly httpAgent = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, scheduling: 'lifo' });
  /** Parsed request URLs; a process calls a handful of distinct ones. */
  private readonly targets = new Map<string, Target>();

  /**
   * Sends the request and waits for the response headers. A non-2xx status
   * becomes an `http` UpstreamError carrying the upstream's message and type.
   */
  async open(request: UpstreamHttpRequest): Promise<UpstreamExchange> {
    if (request.signal.aborted) throw abortedError();
    const body = JSON.stringify(request.body);
    let exchange: UpstreamExchange;
    try {
      exchange = await this.send(request, body);
    } catch (error) {
      if (!(error instanceof StaleSocketError)) throw error;
      // The request never reached a live server: sending it again is safe.
      request.sent?.markUnsent();
      exchange = await this.send(request, body).catch((retryError: unknown) => {
        throw retryError instanceof StaleSocketError ? retryError.failure : retryError;
      });
    }
    if (exchange.status < 200 || exchange.status >= 300) {
      try {
        const text = await exchange.readText(MAX_ERROR_BODY_BYTES);
        throw httpError(exchange.status, text, retryAfterMs(exchange.headers));
      } finally {
        exchange.close();
      }
    }
    return exchange;
  }

  /** Closes idle connections (graceful shutdown). */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private target(url: string): Target {
    let target = this.targets.get(url);
    if (!target) {
      const parsed = new URL(url);
      const secure = parsed.protocol === 'https:';
      if (!secure && parsed.protocol !== 'http:') throw new UpstreamError('connect', `unsupported upstream URL scheme ${parsed.protocol}`);
      target = {
        module: secure ? https : http,
        agent: secure ? this.httpsAgent : this.httpAgent,
        hostname: parsed.hostname.replace(/^\[|\]$/g, ''),
        port: parsed.port || (secure ? '443' : '80'),
        path: `${parsed.pathname}${parsed.search}`,
      };
      this.targets.set(url, target);
    }
    return target;
  }

  private send(request: UpstreamHttpRequest, body: string): Promise<UpstreamExchange> {
    const { provider, signal } = request;
    const target = this.target(request.url);
    return new Promise((resolve, reject) => {
      const state: { cause?: Cause } = {};
      let responded = false;
      const req = target.module.request({
        agent: target.agent,
        hostname: target.hostname,
        port: target.port,
        path: target.path,
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(body)) },
      });
      // 'finish': the last bytes of the request went to the operating system
      // (after the connection was made). Node also emits it when a request is
      // destroyed with bytes still unwritten, which is not a request sent.
      const sent = request.sent;
      if (sent) req.once('finish', () => req.destroyed || sent.markSent());
      const onAbort = (): void => {
        state.cause ??= 'aborted';
        req.destroy();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const detach = (): void => signal.removeEventListener('abort', onAbort);
      const timer = setTimeout(() => {
        state.cause ??= 'connect-timeout';
        req.destroy();
      }, provider.connectTimeoutMs);
      req.on('response', (res) => {
        responded = true;
        clearTimeout(timer);
        resolve(new UpstreamExchange(state, req, res, provider, detach));
      });
      // Stays attached: a late socket error must never go unhandled.
      req.on('error', (error) => {
        if (responded) return;
        clearTimeout(timer);
        detach();
        const failure = failureBeforeHeaders(state.cause, error, provider);
        const code = (error as NodeJS.ErrnoException).code;
        reject(state.cause === undefined && req.reusedSocket && code && STALE_SOCKET_CODES.has(code) ? new StaleSocketError(failure) : failure);
      });
      req.end(body);
    });
  }
}

class StaleSocketError extends Error {
  constructor(readonly failure: UpstreamError) {
    super(failure.message);
  }
}

export class UpstreamExchange {
  private finished = false;
  private ended = false;
  private failed: unknown = undefined;
  private waiter: { resolve: (chunk: Buffer | null) => void; reject: (error: unknown) => void } | undefined;

  constructor(
    // Shared with the abort listener and timers, which record why they fired.
    private readonly state: { cause?: Cause },
    private readonly req: http.ClientRequest,
    private readonly res: http.IncomingMessage,
    private readonly provider: ProviderConfig,
    private readonly detach: () => void,
  ) {
    res.on('readable', () => {
      const waiter = this.waiter;
      if (!waiter) {
        // Nothing buffered means this is the end of the body: reading it
        // emits 'end', which hands the socket back to the pool even if the
        // adapter, its last event delivered, is never resumed to drain.
        if (res.readableLength === 0) res.read();
        return;
      }
      const chunk = res.read() as Buffer | null;
      if (chunk !== null) {
        this.waiter = undefined;
        waiter.resolve(chunk);
      }
    });
    res.on('end', () => {
      this.ended = true;
      this.settle(null);
    });
    res.on('error', (error) => this.fail(error));
    res.on('close', () => {
      if (!this.ended) this.fail(new Error('connection closed before the body ended'));
    });
  }

  get status(): number {
    return this.res.statusCode ?? 0;
  }

  get headers(): http.IncomingHttpHeaders {
    return this.res.headers;
  }

  /** Whether the upstream answered with a JSON body (some servers ignore `stream: true`). */
  get isJson(): boolean {
    return (this.res.headers['content-type'] ?? '').includes('application/json');
  }

  /** Reads and parses the whole JSON body under the idle clock. */
  async json(): Promise<unknown> {
    const text = await this.readText(Number.POSITIVE_INFINITY);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new UpstreamError('protocol', 'upstream sent a body that is not JSON', this.status);
    }
  }

  /** The body as SSE events, parsed as bytes arrive. */
  events(): AsyncGenerator<SseEvent> {
    return parseSseStream(this.chunks());
  }

  /**
   * After the last protocol event the body normally ends at once; reading to
   * its end lets the connection go back to the keep-alive pool instead of
   * being torn down. A server that lingers is cut off after `graceMs`.
   */
  async drain(graceMs = 250): Promise<void> {
    if (this.finished) return;
    const timer = setTimeout(() => this.req.destroy(), graceMs);
    try {
      while ((await this.next()) !== null);
      this.finished = true;
    } catch {
      // The answer is already complete; a late failure only costs the connection.
    } finally {
      clearTimeout(timer);
    }
  }

  /** Releases the connection; cancels the upstream request if its body was not read to the end. */
  close(): void {
    this.detach();
    if (!this.finished) {
      this.finished = true;
      this.req.destroy();
    }
  }

  /**
   * The body as text, up to about `limit` bytes, under the idle clock. Every
   * plain reply is read here, so it is a loop with one timer re-armed per
   * chunk rather than the chunks() generator with a timer per chunk.
   */
  async readText(limit: number): Promise<string> {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const idle = setTimeout(() => this.idleTimeout(), this.provider.idleTimeoutMs);
    try {
      for (;;) {
        const chunk = await this.next().catch((error: unknown) => {
          throw this.failureAfterHeaders(error);
        });
        if (chunk === null) {
          this.finished = true;
          break;
        }
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes >= limit) break;
        idle.refresh();
      }
    } finally {
      clearTimeout(idle);
    }
    return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
  }

  private idleTimeout(): void {
    this.state.cause ??= 'idle-timeout';
    this.req.destroy();
  }

  private settle(chunk: Buffer | null): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve(chunk);
  }

  private fail(error: unknown): void {
    this.failed ??= error;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error);
  }

  /** The next body chunk, or null at its end. */
  private next(): Promise<Buffer | null> {
    const chunk = this.res.read() as Buffer | null;
    if (chunk !== null) return Promise.resolve(chunk);
    if (this.ended) return Promise.resolve(null);
    if (this.failed !== undefined) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  private async *chunks(): AsyncGenerator<Buffer> {
    for (;;) {
      // The idle clock runs only while waiting on the upstream, not while a
      // slow client holds the previous chunk.
      const timer = setTimeout(() => this.idleTimeout(), this.provider.idleTimeoutMs);
      let chunk: Buffer | null;
      try {
        chunk = await this.next();
      } catch (error) {
        throw this.failureAfterHeaders(error);
      } finally {
        clearTimeout(timer);
      }
      if (chunk === null) {
        this.finished = true;
        return;
      }
      yield chunk;
    }
  }

  private failureAfterHeaders(error: unknown): UpstreamError {
    switch (this.state.cause) {
      case 'aborted':
        return abortedError();
      case 'idle-timeout':
        return new UpstreamError('timeout', `upstream sent nothing for ${this.provider.idleTimeoutMs} ms`);
      case 'connect-timeout':
      case undefined:
        return new UpstreamError('protocol', `upstream connection lost mid-body: ${describe(error)}`);
    }
  }
}

function failureBeforeHeaders(cause: Cause | undefined, error: unknown, provider: ProviderConfig): UpstreamError {
  switch (cause) {
    case 'aborted':
      return abortedError();
    case 'connect-timeout':
      return new UpstreamError('timeout', `no response headers from upstream within ${provider.connectTimeoutMs} ms`);
    case 'idle-timeout':
    case undefined:
      return new UpstreamError('connect', `cannot reach upstream: ${describe(error)}`);
  }
}

/** Error code of a failed request, e.g. ECONNREFUSED (node:http sets `code`; fetch hid it in `cause`). */
function describe(error: unknown): string {
  if (error instanceof Error) {
    const own = (error as NodeJS.ErrnoException).code;
    if (typeof own === 'string') return own;
    const cause = (error as Error & { cause?: unknown }).cause;
    if (cause && typeof cause === 'object') {
      const code = (cause as { code?: unknown }).code;
      if (typeof code === 'string') return code;
      if (cause instanceof Error) return cause.message;
    }
    return error.message;
  }
  return String(error);
}

/**
 * Maps an upstream error reply. Both protocols nest `{ error: { message, type } }`
 * (Anthropic adds a top-level `type: "error"`; OpenAI-compatible servers put
 * the kind in `type` or only in `code`).
 */
function httpError(status: number, bodyText: string, retryAfter: number | undefined): UpstreamError {
  let message = bodyText.trim().slice(0, 500) || `upstream answered HTTP ${status}`;
  let upstreamType: string | undefined;
  try {
    const body = JSON.parse(bodyText) as unknown;
    const error = isRecord(body) ? body.error : undefined;
    if (isRecord(error)) {
      if (typeof error.message === 'string' && error.message !== '') message = error.message;
      if (typeof error.type === 'string' && error.type !== '') upstreamType = error.type;
      else if (typeof error.code === 'string' && error.code !== '') upstreamType = error.code;
    } else if (typeof error === 'string' && error !== '') {
      // Some compatible servers (Ollama, older vLLM) send `{ "error": "text" }`.
      message = error;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): the trimmed text is the message.
  }
  return new UpstreamError('http', message, status, upstreamType, retryAfter);
}

/** Parses one SSE data payload; a malformed one means the stream cannot be trusted. */
export function parseEventData(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data) as unknown;
  } catch {
    throw new UpstreamError('protocol', `upstream sent an event whose data is not JSON${event.event ? ` (${event.event})` : ''}`);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
