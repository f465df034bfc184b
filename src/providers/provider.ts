import type { CanonicalEvent, CanonicalRequest } from '../core/canonical';
import type { Deployment } from '../core/catalog.types';
import type { SentRequest } from './sent-request';

export interface ProviderCall {
  /** The request as the upstream should see it (after input guardrails). */
  request: CanonicalRequest;
  deployment: Deployment;
  /** Aborted when the client goes away or the gateway shuts down. */
  signal: AbortSignal;
  /**
   * Filled by the adapter: the caller's fields a translation to another
   * protocol left out (the caller is told in a header). Empty on
   * pass-through.
   */
  dropped: string[];
  /**
   * Filled by the adapter: what it sent and whether it reached the upstream,
   * for billing a call whose upstream usage never arrives. Absent where
   * nothing is billed (count_tokens).
   */
  sent?: SentRequest;
}

export type UpstreamFailure = 'connect' | 'timeout' | 'http' | 'protocol' | 'aborted';

/**
 * A failure talking to an upstream. `retryable` says whether another
 * deployment may be tried (connect error, timeout, 5xx, 429), provided
 * nothing has reached the client yet.
 */
export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly status?: number,
    /** The upstream's own error type, e.g. `overloaded_error`, when it sent one. */
    readonly upstreamType?: string,
    /** How long the upstream asked to be left alone (`retry-after`, `retry-after-ms`), when it said. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }

  get retryable(): boolean {
    if (this.failure === 'aborted') return false;
    if (this.failure === 'http') return this.status === undefined || this.status === 429 || this.status >= 500;
    return true;
  }
}

/** The failure of a call whose caller went away (or that the gateway is shutting down). */
export function abortedError(): UpstreamError {
  return new UpstreamError('aborted', 'request aborted by the caller');
}

/**
 * One upstream protocol. `stream` always yields canonical events, whether the
 * upstream call itself is streamed (`request.stream`) or plain: a plain
 * upstream reply is mapped to the same event sequence. Errors before the first
 * event are UpstreamErrors; the caller decides about fallback.
 */
export interface ProviderAdapter {
  stream(call: ProviderCall): AsyncIterable<CanonicalEvent>;
  /**
   * The upstream's own count of the request's input tokens (raw, before unify
   * factors), for protocols that have a counting endpoint. Errors are
   * UpstreamErrors.
   */
  countTokens?(call: ProviderCall): Promise<number>;
}
