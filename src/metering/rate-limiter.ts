// Per-key rate limits shared by every process on one PostgreSQL (docs/architecture.md §18),
// on the credit ledger's idea (credit-ledger.ts): each process holds leases
// on a key's budget, granted from rows of `rate_leases` in chunks, and admits
// from them without a round trip; only a lease that does not cover a call
// grows, in one call of gateway_rate_grow, which serialises the growers of a
// key (and kind) on an advisory lock and never grants past the limit. Far
// from the limit a grant carries a spare chunk (an eighth of what is left);
// near it, exactly what is asked, and what a call gives back then returns to
// the row at once so the other processes can use it.
//
// Three budgets per key, each a lease:
// - requests per UTC calendar minute: one per admitted call, kept;
// - unified tokens per UTC calendar minute: the call's worst case at
//   admission, the part it did not use given back at settlement;
// - concurrent requests: one slot per call, given back when the call ends.
// The rows of a minute count until the minute ends whatever happens to their
// process (what a dead process admitted was admitted); concurrency rows live
// by heartbeat and stop counting a TTL after their process dies.
//
// Overshoot: none. Grants never exceed the limit less every row, and a
// process admits only what its rows hold (the local mirror never exceeds the
// row: grants are added after PostgreSQL commits them, give-backs taken off
// before). The price is the other way: a spare chunk one process holds is
// not usable by another until it is given back (next heartbeat, or at once
// near the limit), so a key at its limit may see a refusal while a few
// percent of its minute sit unused in another process's lease.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { type AppError, appError } from '../errors';
import type { RateLimit } from '../core/rate-limit';

export type { RateLimit };


export type RateKind = 'requests' | 'tokens' | 'concurrent';
export const RATE_KINDS: readonly RateKind[] = ['requests', 'tokens', 'concurrent'];

const WINDOW_MS = 60_000;
/** What a refusal of concurrency asks the caller to wait: a slot frees when any call ends. */
const CONCURRENCY_RETRY_MS = 1_000;
/** Heartbeats between two sweeps of old lease rows. */
const GC_EVERY_BEATS = 12;

interface Lease {
  readonly keyId: string;
  readonly kind: RateKind;
  /** The UTC minute (ms since the epoch / 60 000) for requests and tokens; 0 for concurrency. */
  readonly window: number;
  /** The row's amount as this process last knew it (never above the row). */
  mirror: number;
  /** What admitted calls hold of it (requests: every call of the minute; tokens: reserved less given back; concurrency: calls running). */
  held: number;
  /** performance.now() until which a concurrency row is surely unexpired (minute rows: until their minute ends). */
  validUntil: number;
  growing: Promise<void> | null;
  /** The last grow had no spare chunk to give: what calls give back returns to the row at once. */
  tight: boolean;
  /** What the limit left beyond every process's rows at the last grow, and when (performance.now()) that grow started. */
  headroom: number;
  readAt: number;
}

/** One budget of one call: the lease it took from, and how much. */
interface Taken {
  lease: Lease;
  amount: number;
  limit: number;
}

/** Counters for the metrics and `npm run bench`. */
export interface RateCounts {
  admitted: Record<RateKind, number>;
  refused: Record<RateKind, number>;
  /** Admissions decided from this process's leases alone, without waiting. */
  local: number;
  /** Round trips to gateway_rate_grow. */
  grows: number;
}

export interface RateLimiterOptions {
  /** How long a concurrency lease outlives its last heartbeat (the credit leases' TTL). */
  leaseTtlMs: number;
  logger: Logger;
}

/** A call's hold on its key's budgets: tokens settled by metering, the concurrency slot freed when the call ends. */
export class RateAdmission {
  private tokensOpen = true;
  private slotOpen = true;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly taken: readonly Taken[],
    private readonly at: number,
  ) {}

  /** The x-ratelimit-* headers for the answer (remaining as this process last read the key's budgets). */
  headers(): Record<string, string> {
    return this.limiter.headersFor(this.taken, this.at);
  }

  /** The call used `tokens` unified tokens: the rest of what admission reserved is budget again. */
  settleTokens(tokens: number): void {
    if (!this.tokensOpen) return;
    this.tokensOpen = false;
    const taken = this.taken.find((t) => t.lease.kind === 'tokens');
    if (taken) this.limiter.giveBack(taken.lease, Math.max(0, taken.amount - Math.max(0, Math.ceil(tokens))));
  }

  /** The call ended (answered, failed, aborted or cut): its concurrency slot is free, and tokens not settled stay counted. */
  end(): void {
    if (!this.slotOpen) return;
    this.slotOpen = false;
    const taken = this.taken.find((t) => t.lease.kind === 'concurrent');
    if (taken) this.limiter.giveBack(taken.lease, taken.amount);
  }

  /** The call was refused before it could use anything (e.g. the credit limit): every budget as if it never came. */
  undo(): void {
    this.end();
    this.settleTokens(0);
    const taken = this.taken.find((t) => t.lease.kind === 'requests');
    if (taken) this.limiter.giveBack(taken.lease, taken.amount);
  }
}

export class RateLimiter {
  /** This process's name on its lease rows. */
  readonly holder = `${hostname().slice(0, 40)}:${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly leases = new Map<string, Lease>();
  private heartbeat: NodeJS.Timeout | undefined;
  private beating: Promise<void> | null = null;
  private flushing: Promise<void> | null = null;
  private flushQueued = false;
  private beats = 0;
  readonly counts: RateCounts = {
    admitted: { requests: 0, tokens: 0, concurrent: 0 },
    refused: { requests: 0, tokens: 0, concurrent: 0 },
    local: 0,
    grows: 0,
  };

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: RateLimiterOptions,
  ) {}

  start(): void {
    this.heartbeat ??= setInterval(() => void this.beat(), Math.max(50, Math.floor(this.options.leaseTtlMs / 3)));
    this.heartbeat.unref();
  }

  /**
   * Takes one request, `tokens` unified tokens and one concurrency slot from
   * the key's budgets it has a limit for, or throws 429 `rate_limited` and
   * takes nothing. Synchronous when this process's leases cover the call.
   */
  admit(keyId: string, limit: RateLimit, tokens: number, now = Date.now()): RateAdmission | Promise<RateAdmission> {
    const window = Math.floor(now / WINDOW_MS);
    const wanted: Taken[] = [];
    if (limit.requestsPerMinute !== null) wanted.push({ lease: this.lease(keyId, 'requests', window), amount: 1, limit: limit.requestsPerMinute });
    if (limit.tokensPerMinute !== null) wanted.push({ lease: this.lease(keyId, 'tokens', window), amount: Math.max(0, Math.ceil(tokens)), limit: limit.tokensPerMinute });
    if (limit.concurrentRequests !== null) wanted.push({ lease: this.lease(keyId, 'concurrent', 0), amount: 1, limit: limit.concurrentRequests });
    if (wanted.every((t) => this.free(t.lease) >= t.amount)) {
      this.counts.local++;
      return this.grant(wanted, now);
    }
    return this.admitFromDatabase(wanted, now);
  }

  private lease(keyId: string, kind: RateKind, window: number): Lease {
    const id = `${keyId}|${kind}|${window}`;
    let lease = this.leases.get(id);
    if (lease === undefined) {
      lease = { keyId, kind, window, mirror: 0, held: 0, validUntil: 0, growing: null, tight: false, headroom: 0, readAt: -1 };
      this.leases.set(id, lease);
    }
    return lease;
  }

  private grant(wanted: Taken[], now: number): RateAdmission {
    for (const t of wanted) {
      t.lease.held += t.amount;
      this.counts.admitted[t.lease.kind]++;
    }
    return new RateAdmission(this, wanted, now);
  }

  private async admitFromDatabase(wanted: Taken[], now: number): Promise<RateAdmission> {
    const taken: Taken[] = [];
    for (const t of wanted) {
      if (await this.take(t)) {
        taken.push(t);
        continue;
      }
      // Refused on this budget: what the others gave this call goes back.
      for (const back of taken) this.giveBack(back.lease, back.amount);
      this.counts.refused[t.lease.kind]++;
      throw this.refusal(t, wanted, now);
    }
    // take() held each amount already; only the counts are left.
    for (const t of taken) this.counts.admitted[t.lease.kind]++;
    return new RateAdmission(this, taken, now);
  }

  /** Holds `t.amount` of its lease, growing the lease from PostgreSQL as needed; false when the limit leaves too little. */
  private async take(t: Taken): Promise<boolean> {
    const { lease, amount } = t;
    const arrived = performance.now();
    for (let round = 0; ; round++) {
      // A grow in flight may bring enough for this call too.
      while (lease.growing) await lease.growing;
      const free = this.free(lease);
      if (free >= amount) {
        lease.held += amount;
        return true;
      }
      // A grow that read the rows after this call arrived found too little: that answer stands for it too (one round trip refuses a crowd).
      if (lease.readAt >= arrived && lease.headroom < amount - free) return false;
      // Other calls of this process may take a grant first (they wake in turn): a few rounds, then the answer stands.
      if (round === 3) return false;
      const growing = this.grow(lease, amount - free, t.limit);
      lease.growing = growing.then(
        () => undefined,
        () => undefined,
      );
      let granted: number;
      try {
        granted = await growing;
      } finally {
        lease.growing = null;
      }
      if (granted === 0) {
        // Calls that ended while this one waited may have freed enough.
        if (this.free(lease) < amount) return false;
      }
    }
  }

  /** What the lease covers beyond what calls hold (nothing once its row may have stopped counting). */
  private free(lease: Lease): number {
    if (lease.kind === 'concurrent' && performance.now() >= lease.validUntil) return 0;
    return lease.mirror - lease.held;
  }

  /** One round trip: the lease grows by at least `need` (else nothing) if the limit leaves it; resolves to the grant. */
  private async grow(lease: Lease, need: number, limit: number): Promise<number> {
    const started = performance.now();
    this.counts.grows++;
    // A database that is away fails the call as every data-plane read does (503 database_unavailable, toAppError).
    const result = await this.pool.query<{ granted: string; headroom: string }>({
      name: 'rate_grow',
      text: 'select granted, headroom from gateway_rate_grow($1, $2, $3, $4, $5, $6, $7)',
      values: [lease.keyId, lease.kind, lease.window, this.holder, need, limit, this.options.leaseTtlMs],
    });
    const granted = Number(result.rows[0]?.granted ?? 0);
    lease.mirror += granted;
    lease.headroom = Math.max(0, Number(result.rows[0]?.headroom ?? 0));
    lease.tight = granted <= need;
    lease.readAt = started;
    if (lease.kind === 'concurrent') lease.validUntil = started + this.validFor;
    return granted;
  }

  /** A concurrency row is surely alive for two thirds of its TTL after the statement that extended it started. */
  private get validFor(): number {
    return (this.options.leaseTtlMs * 2) / 3;
  }

  /** `amount` of what a call held is budget again: this process's at once, every process's at once near the limit, else at the next heartbeat. */
  giveBack(lease: Lease, amount: number): void {
    if (amount <= 0) return;
    lease.held -= amount;
    if (lease.tight) this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      void this.flush();
    });
  }

  /** Returns the surplus of the tight leases to their rows (one statement for all), so the other processes can use it. */
  private async flush(): Promise<void> {
    if (this.flushing) {
      await this.flushing;
      return this.scheduleFlush();
    }
    this.flushing = this.returnSurplus((lease) => lease.tight, false).finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Keeps this process's concurrency leases alive and gives back what no call holds (at most one beat at a time). */
  async beat(): Promise<void> {
    if (this.beating) return this.beating;
    this.beating = this.returnSurplus(() => true, true).finally(() => {
      this.beating = null;
    });
    return this.beating;
  }

  private async returnSurplus(which: (lease: Lease) => boolean, heartbeat: boolean): Promise<void> {
    const window = Math.floor(Date.now() / WINDOW_MS);
    const keys: string[] = [];
    const kinds: string[] = [];
    const windows: number[] = [];
    const amounts: number[] = [];
    const started = performance.now();
    for (const [id, lease] of this.leases) {
      const past = lease.kind !== 'concurrent' && lease.window < window;
      // A past minute's row stops counting as its minute ends; calls settling against it change nothing that matters.
      if (past) {
        if (heartbeat) this.leases.delete(id);
        continue;
      }
      if (lease.growing || !which(lease)) continue;
      const surplus = lease.mirror - lease.held;
      if (surplus > 0) {
        // Taken off the mirror first: until the row agrees, the mirror is the smaller.
        lease.mirror -= surplus;
        keys.push(lease.keyId);
        kinds.push(lease.kind);
        windows.push(lease.window);
        amounts.push(surplus);
      }
      if (heartbeat && lease.held === 0 && lease.mirror === 0) this.leases.delete(id);
    }
    if (keys.length === 0 && (!heartbeat || this.leases.size === 0)) return;
    try {
      await this.pool.query({
        name: heartbeat ? 'rate_heartbeat' : 'rate_give_back',
        text: `with back as (select * from unnest($3::text[], $4::text[], $5::bigint[], $6::bigint[]) as v(key_id, kind, window_start, amount))
          update rate_leases l
          set amount = l.amount - coalesce((select b.amount from back b where b.key_id = l.key_id and b.kind = l.kind and b.window_start = l.window_start), 0),
              expires_at = case when $7 and l.kind = 'concurrent' then now() + $2 * interval '1 millisecond' else l.expires_at end
          where l.holder = $1 and ($7 or (l.key_id, l.kind, l.window_start) in (select key_id, kind, window_start from back))`,
        values: [this.holder, this.options.leaseTtlMs, keys, kinds, windows, amounts, heartbeat],
      });
      if (heartbeat) {
        for (const lease of this.leases.values()) {
          if (lease.kind === 'concurrent' && lease.validUntil > 0 && lease.validUntil < started + this.validFor) lease.validUntil = started + this.validFor;
        }
        if (++this.beats % GC_EVERY_BEATS === 0) {
          await this.pool.query({ name: 'rate_leases_gc', text: `delete from rate_leases where expires_at < now() - interval '1 hour'` });
        }
      }
    } catch (error) {
      // What was given back stays held in the row (safe) until its minute ends, or it expires, or a later beat gets through.
      this.options.logger.warn({ err: error }, 'rate lease give-back failed');
    }
  }

  /** The x-ratelimit-* headers of the request and token budgets among `taken`. */
  headersFor(taken: readonly Taken[], now: number): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const t of taken) {
      if (t.lease.kind === 'concurrent') continue;
      const remaining = Math.max(0, Math.min(t.limit, t.lease.headroom + this.free(t.lease)));
      headers[`x-ratelimit-limit-${t.lease.kind}`] = String(t.limit);
      headers[`x-ratelimit-remaining-${t.lease.kind}`] = String(remaining);
      headers[`x-ratelimit-reset-${t.lease.kind}`] = `${Math.ceil(untilWindowEnd(t.lease.window, now) / 1000)}s`;
    }
    return headers;
  }

  private refusal(refused: Taken, wanted: readonly Taken[], now: number): AppError {
    const { kind } = refused.lease;
    const waitMs = kind === 'concurrent' ? CONCURRENCY_RETRY_MS : untilWindowEnd(refused.lease.window, now);
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    const budget =
      kind === 'concurrent'
        ? `${refused.limit} concurrent requests`
        : kind === 'requests'
          ? `${refused.limit} requests per minute`
          : `${refused.limit} tokens per minute (this call may use up to ${refused.amount})`;
    return appError('keyRateLimited', { budget, seconds }, {
      headers: {
        ...this.headersFor(wanted, now),
        'retry-after': String(seconds),
        'retry-after-ms': String(Math.max(1, Math.ceil(waitMs))),
        'x-should-retry': 'true',
      },
    });
  }

  /** Graceful shutdown, after every call has ended: unused budget goes back and this process's concurrency rows are deleted. */
  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    await this.beating;
    await this.flushing;
    await this.beat();
    this.leases.clear();
    await this.pool.query(`delete from rate_leases where holder = $1 and kind = 'concurrent'`, [this.holder]).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'rate leases not given back at shutdown; they expire');
    });
  }
}

/** Milliseconds from `now` until the UTC minute `window` ends (at least 1). */
function untilWindowEnd(window: number, now: number): number {
  return Math.max(1, (window + 1) * WINDOW_MS - now);
}
