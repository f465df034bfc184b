// Open-loop load at a fixed rate, for the latency a gateway adds at a steady
// load (issue 19): request i is due at start + i/rate whatever happened to
// the ones before, and its latency is counted from when it was due, not from
// when it could be sent. A target that falls behind so pays for the queue it
// builds, which closed-loop generators (and autocannon's per-second bursts)
// hide: no coordinated omission.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface PacedOptions {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Requests per second. */
  rate: number;
  seconds: number;
  /** A streamed call: also time to the first text delta. */
  stream: boolean;
}

export interface PacedResult {
  rate: number;
  sent: number;
  ok: number;
  failed: number;
  /** ms from due time to the end of the reply, one per answered call, sorted. */
  latencies: number[];
  /** ms from due time to the first text delta (streams only), sorted. */
  firstText: number[];
  /** How late the generator itself sent, p99 ms (its own lag: a check on the measurement). */
  sendLagP99: number;
}

export async function pacedLoad(options: PacedOptions): Promise<PacedResult> {
  const url = new URL(options.path, options.origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  const total = Math.round(options.rate * options.seconds);
  const interval = 1000 / options.rate;
  const latencies: number[] = [];
  const firstText: number[] = [];
  const sendLag: number[] = [];
  let ok = 0;
  let failed = 0;
  let sent = 0;
  const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(options.body)), ...options.headers };

  const send = (due: number): Promise<void> =>
    new Promise((resolve) => {
      sendLag.push(performance.now() - due);
      let first: number | undefined;
      const request = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (response) => {
        const good = response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (options.stream && first === undefined && chunk.includes('"text_delta"')) first = performance.now() - due;
        });
        response.on('end', () => {
          if (good) {
            ok += 1;
            latencies.push(performance.now() - due);
            if (first !== undefined) firstText.push(first);
          } else {
            failed += 1;
          }
          resolve();
        });
        response.on('error', () => {
          failed += 1;
          resolve();
        });
      });
      request.on('error', () => {
        failed += 1;
        resolve();
      });
      request.end(options.body);
    });

  const inFlight: Array<Promise<void>> = [];
  const start = performance.now() + 20;
  await new Promise<void>((done) => {
    const tick = (): void => {
      const now = performance.now();
      // Everything that is due goes out now, each timed from its own due time.
      while (sent < total && start + sent * interval <= now) {
        inFlight.push(send(start + sent * interval));
        sent += 1;
      }
      if (sent >= total) {
        done();
        return;
      }
      const next = start + sent * interval - performance.now();
      if (next > 1.5) setTimeout(tick, next - 1);
      else setImmediate(tick);
    };
    tick();
  });
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  firstText.sort((a, b) => a - b);
  sendLag.sort((a, b) => a - b);
  return { rate: options.rate, sent, ok, failed, latencies, firstText, sendLagP99: quantile(sendLag, 0.99) };
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Share of `latencies` more than `threshold` ms above `reference` (the bare proxy's median at the same rate). */
export function shareAbove(latencies: readonly number[], reference: number, threshold: number): number {
  if (latencies.length === 0) return Number.NaN;
  let above = 0;
  for (const latency of latencies) if (latency - reference > threshold) above += 1;
  return above / latencies.length;
}
