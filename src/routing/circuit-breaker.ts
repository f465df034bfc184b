// Per-deployment circuit breaker. After `threshold` consecutive failures a
// deployment is cooled down (open) for `cooldownMs`; then one probe call is
// let through (half-open): success closes the circuit, failure reopens it.

export type CircuitState = 'closed' | 'open' | 'half_open';

interface Circuit {
  failures: number;
  openedAt: number | null;
  probing: boolean;
}

export interface BreakerOptions {
  threshold: number;
  cooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = { threshold: 3, cooldownMs: 30_000 };

export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();

  constructor(
    private readonly options: BreakerOptions = DEFAULT_BREAKER,
    private readonly now: () => number = Date.now,
  ) {}

  private circuit(id: string): Circuit {
    let c = this.circuits.get(id);
    if (!c) this.circuits.set(id, (c = { failures: 0, openedAt: null, probing: false }));
    return c;
  }

  state(id: string): CircuitState {
    const c = this.circuits.get(id);
    if (!c || c.openedAt === null) return 'closed';
    return this.now() - c.openedAt >= this.options.cooldownMs ? 'half_open' : 'open';
  }

  /** Whether a call may go to this deployment now; claims the single half-open probe. */
  tryAcquire(id: string): boolean {
    const state = this.state(id);
    if (state === 'closed') return true;
    if (state === 'open') return false;
    const c = this.circuit(id);
    if (c.probing) return false;
    c.probing = true;
    return true;
  }

  success(id: string): void {
    const c = this.circuit(id);
    c.failures = 0;
    c.openedAt = null;
    c.probing = false;
  }

  failure(id: string): void {
    const c = this.circuit(id);
    c.failures += 1;
    if (c.probing || c.failures >= this.options.threshold) c.openedAt = this.now();
    c.probing = false;
  }
}
