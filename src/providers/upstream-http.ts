// The one HTTP exchange every network adapter makes: POST a JSON body, then
// read either a JSON reply or an SSE stream. It owns the three clocks and the
// cancellation rules so each adapter only maps protocol shapes:
// - no response headers within `connectTimeoutMs` → 'timeout';
// - no bytes for `idleTimeoutMs` while reading the body → 'timeout';
// - the caller's signal → 'aborted', and the upstream request is torn down
//   (undici closes the socket), so an abandoned answer stops costing tokens.
// Global fetch (undici) pools keep-alive connections per origin process-wide.
import type { ProviderConfig } from '../routing/catalog.types';
import { UpstreamError } from './provider';
import { SseParser, type SseEvent } from './sse-parser';

export interface UpstreamHttpRequest {
  url: string;
  /** Exactly the headers to send; the caller's own credentials never belong here. */
  headers: Record<string, string>;
  body: unknown;
  provider: ProviderConfig;
  signal: AbortSignal;
}

type Cause = 'aborted' | 'connect-timeout' | 'idle-timeout';

/** Longest error body read from an upstream; the message is all we keep. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class UpstreamExchange {
  private finished = false;

  private constructor(
    // Shared with the abort listener and timers, which record why they fired.
    private readonly state: { cause?: Cause },
    private readonly controller: AbortController,
    private readonly provider: ProviderConfig,
    private readonly detach: () => void,
    readonly response: Response,
  ) {}

  /**
   * Sends the request and waits for the response headers. A non-2xx status
   * becomes an `http` UpstreamError carrying the upstream's message and type.
   */
  static async open(request: UpstreamHttpRequest): Promise<UpstreamExchange> {
    const { provider, signal } = request;
    if (signal.aborted) throw abortedError();
    const controller = new AbortController();
    const state: { cause?: Cause } = {};
    const onAbort = (): void => {
      state.cause ??= 'aborted';
      controller.abort();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const detach = (): void => signal.removeEventListener('abort', onAbort);
    const timer = setTimeout(() => {
      state.cause ??= 'connect-timeout';
      controller.abort();
    }, provider.connectTimeoutMs);
    let response: Response;
    try {
      response = await fetch(request.url, {
        method: 'POST',
        headers: request.headers,
        body: JSON.stringify(request.body),
        // A redirect would carry the provider key to wherever it points;
        // it surfaces as an http error instead.
        redirect: 'manual',
        signal: controller.signal,
      });
    } catch (error) {
      detach();
      throw failureBeforeHeaders(state.cause, error, provider);
    } finally {
      clearTimeout(timer);
    }
    const exchange = new UpstreamExchange(state, controller, provider, detach, response);
    if (!response.ok) {
      try {
        const text = await exchange.readText(MAX_ERROR_BODY_BYTES);
        throw httpError(response.status, text);
      } finally {
        exchange.close();
      }
    }
    return exchange;
  }

  /** Whether the upstream answered with a JSON body (some servers ignore `stream: true`). */
  get isJson(): boolean {
    return (this.response.headers.get('content-type') ?? '').includes('application/json');
  }

  /** Reads and parses the whole JSON body under the idle clock. */
  async json(): Promise<unknown> {
    const text = await this.readText(Number.POSITIVE_INFINITY);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new UpstreamError('protocol', 'upstream sent a body that is not JSON', this.response.status);
    }
  }

  /** The body as SSE events, parsed as bytes arrive. */
  async *events(): AsyncGenerator<SseEvent> {
    const parser = new SseParser();
    for await (const chunk of this.chunks()) yield* parser.push(chunk);
    yield* parser.end();
  }

  /**
   * After the last protocol event the body normally ends at once; reading to
   * its end lets the connection go back to the keep-alive pool instead of
   * being torn down. A server that lingers is cut off after `graceMs`.
   */
  async drain(graceMs = 250): Promise<void> {
    const body = this.response.body;
    if (this.finished || !body || body.locked) return;
    const reader = body.getReader();
    const timer = setTimeout(() => this.controller.abort(), graceMs);
    try {
      for (;;) {
        const result = await reader.read();
        if (result.done) {
          this.finished = true;
          return;
        }
      }
    } catch {
      // The answer is already complete; a late failure only costs the connection.
    } finally {
      clearTimeout(timer);
      reader.releaseLock();
    }
  }

  /** Releases the connection; cancels the upstream request if its body was not read to the end. */
  close(): void {
    this.detach();
    if (!this.finished) {
      this.finished = true;
      this.controller.abort();
    }
  }

  private async readText(limit: number): Promise<string> {
    const decoder = new TextDecoder();
    let text = '';
    let bytes = 0;
    for await (const chunk of this.chunks()) {
      bytes += chunk.byteLength;
      text += decoder.decode(chunk, { stream: true });
      if (bytes >= limit) break;
    }
    return text + decoder.decode();
  }

  private async *chunks(): AsyncGenerator<Uint8Array> {
    const body = this.response.body;
    if (!body) {
      this.finished = true;
      return;
    }
    const reader = body.getReader();
    try {
      for (;;) {
        const timer = setTimeout(() => {
          this.state.cause ??= 'idle-timeout';
          this.controller.abort();
        }, this.provider.idleTimeoutMs);
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch (error) {
          throw this.failureAfterHeaders(error);
        } finally {
          clearTimeout(timer);
        }
        if (result.done) {
          this.finished = true;
          return;
        }
        yield result.value;
      }
    } finally {
      reader.releaseLock();
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

function abortedError(): UpstreamError {
  return new UpstreamError('aborted', 'request aborted by the caller');
}

/** Error code of a failed fetch, e.g. ECONNREFUSED; undici hides it in `cause`. */
function describe(error: unknown): string {
  if (error instanceof Error) {
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
export function httpError(status: number, bodyText: string): UpstreamError {
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
  return new UpstreamError('http', message, status, upstreamType);
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
