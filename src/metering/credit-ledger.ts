// The credit ledger's process side (docs/architecture.md §9). Admission reserves a call's
// worst case against a lease this process holds on the account's headroom;
// only when the lease does not cover it does admission go to PostgreSQL
// (gateway_credit_grow, one round trip, ordered per account by the account
// row's lock). Metering settles: the usage statement takes the reservation off
// this process's lease as it adds the call's exact cost to the month's usage
// (UsageRecorder), so the part of the worst case the call did not use is
// headroom again for every process at once. A heartbeat keeps the leases
// alive and gives back what no call holds; a process that dies stops beating
// and its leases stop counting after the lease TTL.
//
// The local figures are a conservative mirror of the lease row: additions
// (grants) reach the mirror after PostgreSQL commits them, subtractions
// (give-backs) before, and a settlement's reservation is held until its
// commit is acknowledged, so what this process admits never exceeds its row.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { AccountView } from '../domain/accounts/account.service';
import { zoneMonth } from '../domain/zone-time';
import { type AppError, appError } from '../errors';
import { formatMicros } from '../core/decimal';
import type { WorstCase } from './worst-case';

/** Heartbeats between two sweeps of expired lease rows (at the default TTL, a minute). */
const GC_EVERY_BEATS = 12;

interface Lease {
  readonly accountId: string;
  readonly month: string;
  /** The lease row's amount as this process last knew it (never above the row). */
  mirror: number;
  /** Reservations of calls admitted and not yet settled. */
  inflight: number;
  /** performance.now() until which the row is surely unexpired. */
  validUntil: number;
  growing: Promise<void> | null;
}

/** A call's hold on credit: settled by metering, or released when nothing was metered. */
export class Reservation {
  private open = true;

  constructor(
    private readonly lease: Lease,
    /** Micro-units held. */
    readonly micros: number,
    /** max_tokens as requested and as admission lowered it, when it did. */
    readonly lowered: { from: number; to: number } | null,
  ) {}

  /** The month whose lease holds it (the one the usage statement settles against). */
  get month(): string {
    return this.lease.month;
  }

  /**
   * The usage statement committed: the exact cost entered the month's usage
   * and this reservation left the lease, so what the worst case held beyond
   * the cost is every process's headroom again at once.
   */
  settle(): void {
    if (!this.open) return;
    this.open = false;
    this.lease.mirror -= this.micros;
    this.lease.inflight -= this.micros;
  }

  /** Nothing was metered (the record could not be written, or the call never got that far): the lease keeps it until the next heartbeat. */
  release(): void {
    if (!this.open) return;
    this.open = false;
    this.lease.inflight -= this.micros;
  }
}

export interface AdmissionRequest {
  account: AccountView;
  worst: WorstCase;
}

export interface CreditLedgerOptions {
  /** How long a lease outlives its last heartbeat (GATEWAY_CREDIT_LEASE_TTL_MS). */
  leaseTtlMs: number;
  logger: Logger;
}

/** Counters for `npm run bench` and the metrics: how admissions were decided. */
export interface AdmissionCounts {
  /** Admitted from this process's lease without waiting. */
  local: number;
  /** Waited for the ledger (a grow of the lease, its own or one in flight). */
  ledger: number;
  /** Round trips to gateway_credit_grow. */
  grows: number;
  /** Seconds the `ledger` admissions waited in all, and the longest one (what reservations add to a call's latency beyond a few µs of CPU). */
  ledgerWaitSeconds: number;
  ledgerWaitMaxSeconds: number;
  lowered: number;
  refused: number;
}

export class CreditLedger {
  /** This process's name on its lease rows. */
  readonly holder = `${hostname().slice(0, 40)}:${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly leases = new Map<string, Lease>();
  private heartbeat: NodeJS.Timeout | undefined;
  private beating: Promise<void> | null = null;
  private beats = 0;
  readonly counts: AdmissionCounts = { local: 0, ledger: 0, grows: 0, ledgerWaitSeconds: 0, ledgerWaitMaxSeconds: 0, lowered: 0, refused: 0 };

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: CreditLedgerOptions,
  ) {}

  start(): void {
    this.heartbeat ??= setInterval(() => void this.beat(), Math.max(50, Math.floor(this.options.leaseTtlMs / 3)));
    this.heartbeat.unref();
  }

  /**
   * Reserves the call's worst case against the limit of `account` (which has
   * one), or refuses it with the credit limit's 429. Synchronous when this
   * process's lease covers the call, which is every call of an account far
   * from its limit but the first of each heartbeat period.
   */
  admit(request: AdmissionRequest, now = new Date()): Reservation | Promise<Reservation> {
    const { account, worst } = request;
    const month = zoneMonth(account.timezone, now);
    const key = `${account.id}|${month}`;
    let lease = this.leases.get(key);
    if (lease === undefined) {
      lease = { accountId: account.id, month, mirror: 0, inflight: 0, validUntil: 0, growing: null };
      this.leases.set(key, lease);
    }
    // The lease covers it: admitted at once, even while a grow for another call is in flight (the mirror never exceeds the row).
    if (performance.now() < lease.validUntil && lease.mirror - lease.inflight >= worst.micros) {
      this.counts.local++;
      return reserve(lease, worst.micros);
    }
    return this.admitFromLedger(lease, account, worst);
  }

  private async admitFromLedger(lease: Lease, account: AccountView, worst: WorstCase): Promise<Reservation> {
    this.counts.ledger++;
    const started = performance.now();
    try {
      return await this.decideFromLedger(lease, account, worst);
    } finally {
      const waited = (performance.now() - started) / 1000;
      this.counts.ledgerWaitSeconds += waited;
      if (waited > this.counts.ledgerWaitMaxSeconds) this.counts.ledgerWaitMaxSeconds = waited;
    }
  }

  private async decideFromLedger(lease: Lease, account: AccountView, worst: WorstCase): Promise<Reservation> {
    const lowering = account.creditOverflow === 'lower_max_tokens';
    // What must fit at least: the whole worst case, or when lowering, the cheapest useful call.
    const minimum = lowering ? Math.min(worst.minimumMicros, worst.micros) : worst.micros;
    /** What the account's limit leaves beyond every lease, as the last grow read it (all processes). */
    let headroom = 0;
    for (let grows = 0; ; grows++) {
      // A grow in flight may bring enough for this call too.
      while (lease.growing) await lease.growing;
      const free = this.free(lease);
      if (free >= worst.micros) return reserve(lease, worst.micros);
      // Another call of this process may take a grant first (they wake in turn): a few rounds, then the answer stands.
      if (grows === 3) break;
      const growing = this.grow(lease, Math.max(0, minimum - free), worst.micros - free);
      lease.growing = growing.then(
        () => undefined,
        () => undefined,
      );
      let granted: number;
      try {
        ({ granted, headroom } = await growing);
      } finally {
        lease.growing = null;
      }
      // The account's headroom is short of even the minimum: no later round changes that.
      if (granted === 0 && minimum > free) break;
    }
    // Calls settled while this one waited may have freed enough.
    const available = this.free(lease);
    if (available >= worst.micros) return reserve(lease, worst.micros);
    const fit = lowering ? worst.fitOutput(available) : null;
    if (fit) {
      this.counts.lowered++;
      return reserve(lease, fit.micros, { from: worst.maxTokens, to: fit.maxTokens });
    }
    this.counts.refused++;
    // The true remaining: the limit less month-to-date less every process's reservations, plus what this lease holds for no call.
    throw creditRefusal(worst.micros, headroom + Math.max(0, available), account.currency);
  }

  /** What the lease covers beyond the calls in flight (nothing once the row may have expired). */
  private free(lease: Lease): number {
    return performance.now() < lease.validUntil ? lease.mirror - lease.inflight : 0;
  }

  /**
   * One round trip: the lease grows by what the account's headroom allows (at
   * least `need`, else nothing); resolves to the grant and what the limit
   * leaves beyond every lease after it.
   */
  private async grow(lease: Lease, need: number, want: number): Promise<{ granted: number; headroom: number }> {
    const started = performance.now();
    this.counts.grows++;
    // A database that is away fails the call as every data-plane read does (503 database_unavailable, toAppError).
    const result = await this.pool.query<{ granted: string; headroom: string | null }>({
      name: 'credit_grow',
      text: 'select granted, headroom from gateway_credit_grow($1, $2, $3, $4, $5, $6)',
      values: [lease.accountId, lease.month, this.holder, need, want, this.options.leaseTtlMs],
    });
    const granted = Number(result.rows[0]?.granted ?? 0);
    lease.mirror += granted;
    lease.validUntil = started + this.validFor;
    return { granted, headroom: Math.max(0, Number(result.rows[0]?.headroom ?? 0)) };
  }

  /** A lease row is surely alive for two thirds of its TTL after the statement that extended it started. */
  private get validFor(): number {
    return (this.options.leaseTtlMs * 2) / 3;
  }

  /** Keeps this process's leases alive and gives back what no call holds (at most one beat at a time). */
  async beat(): Promise<void> {
    if (this.beating) return this.beating;
    this.beating = this.beatOnce().finally(() => {
      this.beating = null;
    });
    return this.beating;
  }

  private async beatOnce(): Promise<void> {
    const accounts: string[] = [];
    const months: string[] = [];
    const returned: number[] = [];
    const started = performance.now();
    for (const [key, lease] of this.leases) {
      if (lease.growing) continue;
      const surplus = lease.mirror - lease.inflight;
      if (surplus > 0) {
        // Taken off the mirror first: until the row agrees, the mirror is the smaller.
        lease.mirror -= surplus;
        accounts.push(lease.accountId);
        months.push(lease.month);
        returned.push(surplus);
      }
      if (lease.inflight === 0 && lease.mirror === 0) this.leases.delete(key);
    }
    // A process serving no account with a limit has nothing to keep alive (its old rows hold 0 and expire).
    if (this.leases.size === 0 && returned.length === 0) return;
    try {
      await this.pool.query({
        name: 'credit_heartbeat',
        text: `with back as (select * from unnest($3::text[], $4::text[], $5::bigint[]) as v(account_id, month, micros))
          update credit_leases l
          set expires_at = now() + $2 * interval '1 millisecond',
              amount_micros = l.amount_micros - coalesce((select micros from back where back.account_id = l.account_id and back.month = l.month), 0)
          where l.holder = $1`,
        values: [this.holder, this.options.leaseTtlMs, accounts, months, returned],
      });
      for (const lease of this.leases.values()) {
        if (lease.validUntil > 0 && lease.validUntil < started + this.validFor) lease.validUntil = started + this.validFor;
      }
      // Rows of processes long gone, about once a minute (they stopped counting when they expired).
      if (++this.beats % GC_EVERY_BEATS === 0) {
        await this.pool.query({ name: 'credit_leases_gc', text: `delete from credit_leases where expires_at < now() - interval '1 hour'` });
      }
    } catch (error) {
      // What was given back stays held in the row until it expires: safe, and only until the database answers again.
      this.options.logger.warn({ err: error }, 'credit lease heartbeat failed');
    }
  }

  /** Graceful shutdown, after the usage recorder has settled every call: this process's leases are given back. */
  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    await this.beating;
    this.leases.clear();
    await this.pool.query('delete from credit_leases where holder = $1', [this.holder]).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'credit leases not given back at shutdown; they expire');
    });
  }
}

/** Holds `micros` of the lease for one call. */
function reserve(lease: Lease, micros: number, lowered: { from: number; to: number } | null = null): Reservation {
  lease.inflight += micros;
  return new Reservation(lease, micros, lowered);
}

/** The refusal of one call whose worst case does not fit; the account's keys stay active for calls that do. */
export function creditRefusal(worstMicros: number, remainingMicros: number, currency: string): AppError {
  return appError('callOverCreditLimit', { worst: formatMicros(worstMicros), remaining: formatMicros(remainingMicros), currency });
}
