// How many request-body bytes may be in flight at once, and how many bodies
// one client may be sending at once. A parsed JSON body, the call built from
// it and the upstream request together hold a few times its size, so a burst
// of large bodies (images, long documents; up to 20 MB each) could take the
// process past its heap limit, where V8 stops it and every call in flight is
// lost.
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
// Each client address (see client-address.ts) may be sending a few bodies at
// once; past that a new one is answered 429 before it is read, so one client
// cannot hold the server's connections and budget with bodies it trickles.
import type { ServerResponse } from 'node:http';
import v8 from 'node:v8';
import { throttleClient } from '../domain/auth/login-throttle';
import { AppError } from '../errors';

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

/** The retryable 503 for a body the budget cannot hold; the connection closes, since the rest of the body is not read. */
export function bodyOverloaded(): AppError {
  return new AppError('unavailable', 'overloaded', 'The gateway holds as many request bodies as its memory allows; retry shortly', {
    headers: { 'retry-after': '1', connection: 'close' },
  });
}

export class BodyBudget {
  private held = 0;
  private readonly readingByClient = new Map<string, number>();

  constructor(
    readonly limitBytes: number,
    readonly bodiesPerClient: number = DEFAULT_BODIES_PER_CLIENT,
  ) {}

  /** Bytes held by all bodies now (tests, metrics). */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Starts a body from the client at `address`, to be fed its bytes as they arrive; throws a
   * 429 when the client is already sending its share of bodies. Everything
   * the body took is given back when `response` closes.
   */
  open(address: string, response: ServerResponse): BodyShare {
    // As the login throttle: an IPv6 client is its /64 (one subscriber holds the whole prefix).
    const client = throttleClient(address);
    const reading = this.readingByClient.get(client) ?? 0;
    if (reading >= this.bodiesPerClient) {
      throw new AppError('rate_limit', 'too_many_requests', `At most ${this.bodiesPerClient} request bodies from one client are read at once; retry when one has been sent`, {
        // The body is not read, so the connection cannot carry another request.
        headers: { 'retry-after': '1', connection: 'close' },
      });
    }
    this.readingByClient.set(client, reading + 1);
    const share = new BodyShare(this, client);
    response.once('close', () => share.close());
    return share;
  }

  /** Takes `bytes` for a body that holds `holding` already; false (nothing taken) when that would pass the limit while others hold some. */
  tryTake(bytes: number, holding: number): boolean {
    if (this.held > holding && this.held + bytes > this.limitBytes) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    if (bytes > 0) this.held = Math.max(0, this.held - bytes);
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
    private readonly client: string,
  ) {}

  /** Counts `bytes` more of the body; false when the budget cannot hold them (answer `bodyOverloaded()` and stop reading). */
  take(bytes: number): boolean {
    if (!this.budget.tryTake(bytes, this.held)) return false;
    this.held += bytes;
    return true;
  }

  /** The whole body has arrived: the client may start another; its bytes stay held until the response closes. */
  received(): void {
    if (!this.reading) return;
    this.reading = false;
    this.budget.finishReading(this.client);
  }

  close(): void {
    this.received();
    this.budget.give(this.held);
    this.held = 0;
  }
}
