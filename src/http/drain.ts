// Graceful drain (docs/architecture.md §15). Fastify's close stops the listener and answers
// requests that arrive on open keep-alive connections with 503, but it cannot
// bound how long in-flight work takes, and a hijacked SSE reply is invisible
// to it. This counts every request on the raw server until its response
// closes, gives them the grace period, then cuts what still runs: each
// `onCut` subscriber (a data-plane call) ends its reply with an error and
// meters what was produced. Connections are closed once nothing is in flight
// so the process can exit without waiting for keep-alive timeouts.
import type { Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';

export interface DrainOutcome {
  /** Requests still running when the grace period ended (cut). */
  cut: number;
  /** Requests still running after the cut had its time (their sockets were destroyed). */
  dropped: number;
  ms: number;
}

export class HttpDrain {
  private inFlight = 0;
  private readonly cutHandlers = new Set<() => void>();
  private cutting = false;
  private readonly idleWaiters = new Set<() => void>();

  constructor(private readonly server: Server) {
    server.on('request', (_request, response) => {
      this.inFlight++;
      response.once('close', () => {
        this.inFlight--;
        if (this.inFlight === 0) for (const wake of [...this.idleWaiters]) wake();
      });
    });
  }

  /** Calls `handler` once if the grace period runs out; the returned function unsubscribes. */
  onCut(handler: () => void): () => void {
    if (this.cutting) {
      queueMicrotask(handler);
      return () => undefined;
    }
    this.cutHandlers.add(handler);
    return () => {
      this.cutHandlers.delete(handler);
    };
  }

  /**
   * Waits up to `graceMs` for in-flight requests, cuts the rest and gives
   * them `cutMs` to write their last event, then closes every connection.
   * Call it after the listener is closed (Fastify's `close()` started).
   */
  async drain(graceMs: number, cutMs = 2_000): Promise<DrainOutcome> {
    const startedAt = Date.now();
    let cut = 0;
    if (!(await this.idleWithin(graceMs))) {
      cut = this.inFlight;
      this.cutting = true;
      const handlers = [...this.cutHandlers];
      this.cutHandlers.clear();
      for (const handler of handlers) handler();
      await this.idleWithin(cutMs);
    }
    const dropped = this.inFlight;
    // Nothing useful is left on any connection: idle keep-alive sockets (and,
    // past the cut, stuck ones) would otherwise hold the server open.
    this.server.closeAllConnections();
    return { cut, dropped, ms: Date.now() - startedAt };
  }

  private async idleWithin(ms: number): Promise<boolean> {
    if (this.inFlight === 0) return true;
    const controller = new AbortController();
    let wake = (): void => undefined;
    const idle = new Promise<boolean>((resolve) => {
      wake = () => resolve(true);
      this.idleWaiters.add(wake);
    });
    const timeout = delay(ms, false, { signal: controller.signal }).catch(() => false);
    try {
      return await Promise.race([idle, timeout]);
    } finally {
      this.idleWaiters.delete(wake);
      controller.abort();
    }
  }
}
