// Failed-login throttling in a sliding window (issue 15). In-process: with
// several gateway processes an attacker gets the budget once per process,
// which still bounds guessing to a handful per minute.
//
// - An attempt is counted when it begins, before the first await: a burst of
//   a thousand parallel guesses gets the budget, not a thousand password
//   checks. A successful login takes its own attempt back.
// - Lockout is per (e-mail, client) pair, so nobody can lock a user out from
//   elsewhere; a client is limited over all e-mails (spraying); and an e-mail
//   has a global backstop against distributed guessing, which does not apply
//   to a client that has signed in as that user before.
// - A client is its IP address, an IPv6 address by its /64 (one subscriber).

import { throttleClient } from '../../core/client-address';

export interface ThrottleLimits {
  windowMs: number;
  /** Attempts per (e-mail, client) in the window. */
  perPair: number;
  /** Attempts per client over all e-mails. */
  perClient: number;
  /** Attempts per e-mail over all clients, except clients with a good record for it. */
  perEmail: number;
  /** How long a successful login keeps its client exempt from the e-mail backstop. */
  goodRecordMs: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { windowMs: 15 * 60_000, perPair: 5, perClient: 30, perEmail: 50, goodRecordMs: 30 * 24 * 3_600_000 };

/** Keys kept at most; past this, the oldest are dropped (memory stays bounded under a flood of made-up e-mails). */
const MAX_KEYS = 100_000;

export class LoginThrottle {
  private readonly attempts = new Map<string, number[]>();
  private readonly goodRecords = new Map<string, number>();

  constructor(
    private readonly limits: ThrottleLimits = DEFAULT_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts an attempt now, synchronously. Returns 0 when it may go ahead (and
   * is counted), or the milliseconds until one may (and it is not counted).
   */
  begin(email: string, ip: string): number {
    const client = throttleClient(ip);
    const checks: Array<[string, number]> = [
      [`p:${email}|${client}`, this.limits.perPair],
      [`c:${client}`, this.limits.perClient],
    ];
    if (!this.hasGoodRecord(email, client)) checks.push([`e:${email}`, this.limits.perEmail]);
    let wait = 0;
    const now = this.now();
    for (const [key, limit] of checks) {
      const list = this.recent(key, now);
      const oldest = list[list.length - limit];
      if (list.length >= limit && oldest !== undefined) wait = Math.max(wait, oldest + this.limits.windowMs - now);
    }
    if (wait > 0) return wait;
    for (const key of [`p:${email}|${client}`, `c:${client}`, `e:${email}`]) this.push(key, now);
    return 0;
  }

  /** The attempt begun for this pair succeeded: it is taken back, the pair's failures are forgotten, and the client gets a good record. */
  succeed(email: string, ip: string): void {
    const client = throttleClient(ip);
    this.attempts.delete(`p:${email}|${client}`);
    for (const key of [`c:${client}`, `e:${email}`]) this.attempts.get(key)?.pop();
    this.goodRecords.delete(`${email}|${client}`);
    this.goodRecords.set(`${email}|${client}`, this.now());
    this.bound(this.goodRecords);
  }

  private hasGoodRecord(email: string, client: string): boolean {
    const at = this.goodRecords.get(`${email}|${client}`);
    return at !== undefined && at + this.limits.goodRecordMs > this.now();
  }

  private recent(key: string, now: number): number[] {
    const cutoff = now - this.limits.windowMs;
    const list = this.attempts.get(key);
    if (!list) return [];
    let drop = 0;
    while (drop < list.length && (list[drop] ?? 0) <= cutoff) drop += 1;
    if (drop > 0) list.splice(0, drop);
    if (list.length === 0) this.attempts.delete(key);
    return list;
  }

  private push(key: string, now: number): void {
    const list = this.attempts.get(key);
    if (list) list.push(now);
    else {
      this.attempts.set(key, [now]);
      this.bound(this.attempts);
    }
  }

  /** Drops the oldest keys past MAX_KEYS (a Map iterates in insertion order). */
  private bound(map: Map<string, unknown>): void {
    if (map.size <= MAX_KEYS) return;
    for (const key of map.keys()) {
      map.delete(key);
      if (map.size <= MAX_KEYS) break;
    }
  }
}
