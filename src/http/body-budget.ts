// How many request-body bytes may be in flight at once. A parsed JSON body,
// the call built from it and the upstream request together hold a few times
// its size, so a burst of large bodies (images, long documents; Fastify takes
// up to 20 MB each) could take the process past its heap limit, where V8
// stops it and every call in flight is lost. Past the budget a new request
// gets 503 `overloaded` (retryable) before its body is read; a request is
// always let in when nothing else holds the budget, so one body larger than
// the whole budget still passes.
import type { ServerResponse } from 'node:http';
import v8 from 'node:v8';
import { AppError } from '../errors';

/** Default: an eighth of the V8 heap limit in raw body bytes (about half the heap once parsed and copied). */
export function defaultBodyBudgetBytes(): number {
  return Math.floor(v8.getHeapStatistics().heap_size_limit / 8);
}

export class BodyBudget {
  private held = 0;

  constructor(readonly limitBytes: number) {}

  /** Takes `bytes` from the budget; false (nothing taken) when that would pass the limit. */
  tryTake(bytes: number): boolean {
    if (bytes <= 0) return true;
    if (this.held > 0 && this.held + bytes > this.limitBytes) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    if (bytes > 0) this.held = Math.max(0, this.held - bytes);
  }

  /**
   * Holds a request's declared body bytes until its response closes (sent,
   * or the connection gone); throws the retryable 503 when they do not fit.
   */
  hold(bytes: number, response: ServerResponse): void {
    if (!this.tryTake(bytes)) {
      throw new AppError('unavailable', 'overloaded', 'The gateway holds as many request bodies as its memory allows; retry shortly', {
        headers: { 'retry-after': '1' },
      });
    }
    if (bytes > 0) response.once('close', () => this.give(bytes));
  }
}
