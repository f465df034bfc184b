// How many request-body bytes may be in flight at once, and how many bodies
// (and bytes) one client may be sending at once. A parsed JSON body, the call
// built from it and the upstream request together hold a few times its size,
// so a burst of large bodies (images, long documents; up to 20 MB each) could
// take the process past its heap limit, where V8 stops it and every call in
// flight is lost.
//
// Bytes are taken as they arrive, not as declared: a Content-Length is only a
// promise, and a client that declares 20 MB and sends nothing must not hold
// 20 MB of everyone else's budget (nor may a chunked body, which declares
// nothing, slip past). A body that would pass the budget is answered 503
// `overloaded` (retryable) and not read further; what it took is given back
// when its response closes, whether answered, timed out by
// GATEWAY_REQUEST_TIMEOUT_MS or dropped. A body is always let through when
// nothing else holds the budget, so one body larger than the whole budget
// still passes.
//
// The budget is shared, so no one may take all of it (issue 28: 49 stalled
// login bodies from one address left 672 bytes of a 40 MB budget, and a keyed
// call from elsewhere got 503):
// - each client address (see client-address.ts) may be sending a few bodies at
//   once; past that a new one is answered 429 before it is read;
// - each address may hold at most GATEWAY_CLIENT_BODY_BUDGET_MB (a quarter of
//   the budget by default), its first body excepted, as above;
// - bodies of callers without a credential (no valid API key or console
//   session: logins, anonymous GraphQL) share an eighth of the budget, so
//   however many addresses send them, keyed calls find room.
import type { ServerResponse } from 'node:http';
import v8 from 'node:v8';
import { throttleClient } from '../core/client-address';
import { type AppError, appError } from '../errors';

/** Default: an eighth of the V8 heap limit in raw body bytes (about half the heap once parsed and copied). */
export function defaultBodyBudgetBytes(): number {
  return Math.floor(v8.getHeapStatistics().heap_size_limit / 8);
}

/**
 * One address is often a whole company (a NAT or an egress proxy in front of
 * every department's agents), and a body that arrives whole counts only for
 * the moment it takes to read: the cap is for bodies trickled in, not for a
 * busy office.
 */
export const DEFAULT_BODIES_PER_CLIENT = 64;

/** A byte count as the limits are written in messages: `8 KB`, `10 MB`, `2.5 MB`. */
export function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  if (mb >= 1) return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
  const kb = bytes / 1024;
  return `${Number.isInteger(kb) ? kb : kb.toFixed(1)} KB`;
}

// The rest of the body is not read, so the connection cannot carry another request.
/** The retryable 503 for a body the budget cannot hold; the connection closes, since the rest of the body is not read. */
export function bodyOverloaded(): AppError {
  return appError('bodiesOverloaded');
}

/** Who sends a body, as the budget sees it. */
export interface BodySender {
  /** The client address (request.ip; an IPv6 client is taken by its /64). */
  address: string;
  /** Whether the request showed a valid API key or console session before its body was read. */
  credentialed: boolean;
}

export class BodyBudget {
  private held = 0;
  private anonymousHeld = 0;
  private readonly readingByClient = new Map<string, number>();
  private readonly heldByClient = new Map<string, number>();
  /** Bytes one client address may hold (its first body excepted). */
  readonly clientLimitBytes: number;
  /** Bytes all callers without a credential may hold together (the first such body excepted). */
  readonly anonymousLimitBytes: number;

  constructor(
    readonly limitBytes: number,
    readonly bodiesPerClient: number = DEFAULT_BODIES_PER_CLIENT,
    clientLimitBytes?: number,
  ) {
    this.clientLimitBytes = clientLimitBytes ?? Math.floor(limitBytes / 4);
    this.anonymousLimitBytes = Math.floor(limitBytes / 8);
  }

  /** Bytes held by all bodies now (tests, metrics). */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Starts a body from `sender`, to be fed its bytes as they arrive; throws a
   * 429 when the client is already sending its share of bodies. Everything
   * the body took is given back when `response` closes.
   */
  open(sender: BodySender, response: ServerResponse): BodyShare {
    // As the login throttle: an IPv6 client is its /64 (one subscriber holds the whole prefix).
    const client = throttleClient(sender.address);
    const reading = this.readingByClient.get(client) ?? 0;
    if (reading >= this.bodiesPerClient) {
      throw appError('tooManyBodies', this.bodiesPerClient);
    }
    this.readingByClient.set(client, reading + 1);
    const share = new BodyShare(this, client, sender.credentialed);
    response.once('close', () => share.close());
    return share;
  }

  /**
   * Takes `bytes` more for `share`; the refusal (and nothing taken) when that
   * would pass a limit while others hold some of it: the whole budget, the
   * client's part, or, for a caller without a credential, the anonymous part.
   */
  take(share: BodyShare, bytes: number): AppError | undefined {
    const holding = share.heldBytes;
    if (this.held > holding && this.held + bytes > this.limitBytes) return bodyOverloaded();
    const byClient = this.heldByClient.get(share.client) ?? 0;
    if (byClient > holding && byClient + bytes > this.clientLimitBytes) {
      return appError('clientBodiesOverloaded', formatBytes(this.clientLimitBytes));
    }
    const anonymous = !share.credentialed;
    if (anonymous && this.anonymousHeld > holding && this.anonymousHeld + bytes > this.anonymousLimitBytes) {
      return appError('anonymousBodiesOverloaded', formatBytes(this.anonymousLimitBytes));
    }
    this.held += bytes;
    this.heldByClient.set(share.client, byClient + bytes);
    if (anonymous) this.anonymousHeld += bytes;
    return undefined;
  }

  /** Gives back what `share` held. */
  give(share: BodyShare, bytes: number): void {
    if (bytes <= 0) return;
    this.held = Math.max(0, this.held - bytes);
    const byClient = (this.heldByClient.get(share.client) ?? 0) - bytes;
    if (byClient > 0) this.heldByClient.set(share.client, byClient);
    else this.heldByClient.delete(share.client);
    if (!share.credentialed) this.anonymousHeld = Math.max(0, this.anonymousHeld - bytes);
  }

  /** A body from `client` is no longer being read (all of it arrived, or its request is over). */
  finishReading(client: string): void {
    const reading = this.readingByClient.get(client) ?? 0;
    if (reading <= 1) this.readingByClient.delete(client);
    else this.readingByClient.set(client, reading - 1);
  }
}

/** One request body's part of the budget. */
export class BodyShare {
  private held = 0;
  private reading = true;

  constructor(
    private readonly budget: BodyBudget,
    readonly client: string,
    readonly credentialed: boolean,
  ) {}

  get heldBytes(): number {
    return this.held;
  }

  /** Counts `bytes` more of the body; the refusal when the budget cannot hold them (answer it and stop reading). */
  take(bytes: number): AppError | undefined {
    const refusal = this.budget.take(this, bytes);
    if (refusal === undefined) this.held += bytes;
    return refusal;
  }

  /** The whole body has arrived: the client may start another; its bytes stay held until the response closes. */
  received(): void {
    if (!this.reading) return;
    this.reading = false;
    this.budget.finishReading(this.client);
  }

  close(): void {
    this.received();
    this.budget.give(this, this.held);
    this.held = 0;
  }
}
