// Per-deployment circuit breaker. After `threshold` consecutive failures a
// deployment is cooled down (open) for `cooldownMs`; then one probe call is
// let through (half-open): success closes the circuit, failure reopens it.
import type { BreakerOptions } from './catalog.types';

export type { BreakerOptions } from './catalog.types';

export type CircuitState = 'closed' | 'open' | 'half_open';

interface Circuit {
  failures: number;
  openedAt: number | null;
  /** When the half-open probe was let through; null while none is out. */
  probeAt: number | null;
}

export const DEFAULT_BREAKER: Readonly<BreakerOptions> = { threshold: 3, cooldownMs: 30_000 };

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
    if (!c) this.circuits.set(id, (c = { failures: 0, openedAt: null, probeAt: null }));
    return c;
  }

  state(id: string): CircuitState {
    const c = this.circuits.get(id);
    if (!c || c.openedAt === null) return 'closed';
    return this.now() - c.openedAt >= this.options(id).cooldownMs ? 'half_open' : 'open';
  }

  /** Whether a call may go to this deployment now; claims the single half-open probe. */
  tryAcquire(id: string): boolean {
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

  failure(id: string): void {
    const c = this.circuit(id);
    c.failures += 1;
    if (c.probeAt !== null || c.failures >= this.options(id).threshold) c.openedAt = this.now();
    c.probeAt = null;
  }
}
