// Per-deployment circuit breaker. After `threshold` consecutive failures a
// deployment is cooled down (open) for `cooldownMs`; then one probe call is
// let through (half-open): success closes the circuit, failure reopens it.
// An upstream 429 is not a failure but a window: the deployment answered, and
// asked not to be called again for a while, so no call goes to it until that
// window has passed (docs/architecture.md §5). The state lives in the process (README,
// Operations).
import type { BreakerOptions } from '../core/catalog.types';

export type { BreakerOptions } from '../core/catalog.types';

export type CircuitState = 'closed' | 'open' | 'half_open';

interface Circuit {
  failures: number;
  openedAt: number | null;
  /** When the deployment's rate-limit window ends; null or past when it is not rate limited. */
  limitedUntil: number | null;
  /** When the half-open probe was let through; null while none is out. */
  probeAt: number | null;
}

export const DEFAULT_BREAKER: Readonly<BreakerOptions> = { threshold: 3, cooldownMs: 30_000 };

/** The window of a 429 that named no wait (`retry-after`, `retry-after-ms`). */
export const DEFAULT_RATE_LIMIT_MS = 1_000;
/**
 * The longest window one 429 opens: a far-off HTTP-date (a skewed clock, a
 * daily quota) is trusted for an hour, then one call asks the upstream again.
 */
export const MAX_RATE_LIMIT_MS = 3_600_000;

/** Options for every deployment, or per deployment id (e.g. from its provider's catalog entry). */
export type BreakerConfig = BreakerOptions | ((id: string) => BreakerOptions);

export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();

  constructor(
    private readonly config: BreakerConfig = DEFAULT_BREAKER,
    private readonly now: () => number = Date.now,
  ) {}

  private options(id: string): BreakerOptions {
    return typeof this.config === 'function' ? this.config(id) : this.config;
  }

  private circuit(id: string): Circuit {
    let c = this.circuits.get(id);
    if (!c) this.circuits.set(id, (c = { failures: 0, openedAt: null, limitedUntil: null, probeAt: null }));
    return c;
  }

  state(id: string): CircuitState {
    const c = this.circuits.get(id);
    if (!c || c.openedAt === null) return 'closed';
    return this.now() - c.openedAt >= this.options(id).cooldownMs ? 'half_open' : 'open';
  }

  /** Milliseconds until the deployment's rate-limit window ends; 0 when it is not rate limited. */
  limitedFor(id: string): number {
    const until = this.circuits.get(id)?.limitedUntil ?? null;
    return until === null ? 0 : Math.max(0, until - this.now());
  }

  /** Whether a call may go to this deployment now; claims the single half-open probe. */
  tryAcquire(id: string): boolean {
    if (this.limitedFor(id) > 0) return false;
    const state = this.state(id);
    if (state === 'closed') return true;
    if (state === 'open') return false;
    const c = this.circuit(id);
    // A probe whose outcome never came back (its caller went away) expires after one cooldown.
    if (c.probeAt !== null && this.now() - c.probeAt < this.options(id).cooldownMs) return false;
    c.probeAt = this.now();
    return true;
  }

  success(id: string): void {
    const c = this.circuit(id);
    c.failures = 0;
    c.openedAt = null;
    c.probeAt = null;
  }

  /**
   * The deployment answered 429: no call goes to it for the wait it asked
   * (`DEFAULT_RATE_LIMIT_MS` when it named none, at most `MAX_RATE_LIMIT_MS`).
   * A window already open is only ever lengthened. It answered, so its
   * circuit closes as on a success. Returns the window from now, in ms.
   */
  rateLimited(id: string, askedMs: number | undefined): number {
    const c = this.circuit(id);
    const wait = Math.min(askedMs ?? DEFAULT_RATE_LIMIT_MS, MAX_RATE_LIMIT_MS);
    const now = this.now();
    c.limitedUntil = Math.max(c.limitedUntil ?? 0, now + wait);
    c.failures = 0;
    c.openedAt = null;
    c.probeAt = null;
    return c.limitedUntil - now;
  }

  failure(id: string): void {
    const c = this.circuit(id);
    c.failures += 1;
    if (c.probeAt !== null || c.failures >= this.options(id).threshold) c.openedAt = this.now();
    c.probeAt = null;
  }
}
