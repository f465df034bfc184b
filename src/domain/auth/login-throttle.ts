// Failed-login throttling, per e-mail and per client IP, in a sliding window.
// In-process: with several gateway processes an attacker gets the budget once
// per process, which still bounds guessing to a handful per minute.

export interface ThrottleLimits {
  windowMs: number;
  perEmail: number;
  perIp: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { windowMs: 15 * 60_000, perEmail: 5, perIp: 30 };

export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: ThrottleLimits = DEFAULT_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  private recent(key: string): number[] {
    const cutoff = this.now() - this.limits.windowMs;
    const list = (this.failures.get(key) ?? []).filter((t) => t > cutoff);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  /** Milliseconds until another attempt is allowed, or 0. */
  retryAfterMs(email: string, ip: string): number {
    const checks: Array<[string, number]> = [
      [`e:${email}`, this.limits.perEmail],
      [`i:${ip}`, this.limits.perIp],
    ];
    let wait = 0;
    for (const [key, limit] of checks) {
      const list = this.recent(key);
      if (list.length >= limit) wait = Math.max(wait, list[list.length - limit]! + this.limits.windowMs - this.now());
    }
    return wait;
  }

  fail(email: string, ip: string): void {
    for (const key of [`e:${email}`, `i:${ip}`]) {
      const list = this.recent(key);
      list.push(this.now());
      this.failures.set(key, list);
    }
  }

  succeed(email: string): void {
    this.failures.delete(`e:${email}`);
  }
}
