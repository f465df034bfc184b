// One gate for the control plane's database work in a process (issue 28): a
// viewer's 10,000 aliased reads once queued in front of other tenants' key
// look-ups and usage commits, and /readyz went 503. REST handlers and GraphQL
// resolvers both pass through it, so control-plane work can only ever hold a
// few connections, one account only a share of those, and one request only
// for a bounded time; the data plane's pool never sees it.
import { type AppError, appError } from '../errors';

export interface ControlPlaneLimits {
  /** Control-plane operations running at once in this process. */
  maxRunning: number;
  /** Of those, one account's at once. */
  maxRunningPerAccount: number;
  /** Operations waiting for a turn, in all and per account; past them the answer is at once. */
  maxWaiting: number;
  maxWaitingPerAccount: number;
}

export const CONTROL_PLANE_LIMITS: ControlPlaneLimits = {
  maxRunning: 8,
  maxRunningPerAccount: 2,
  maxWaiting: 256,
  maxWaitingPerAccount: 16,
};

/** A request's time budget: the moment (ms since the epoch) its database work must be done by. */
export type Deadline = number;

interface Waiter {
  accountId: string;
  grant(): void;
}


/** PostgreSQL cancelled the statement (statement_timeout): the request's time ran out on the server's side. */
function isStatementTimeout(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; cause?: unknown };
  return e.code === '57014' || isStatementTimeout(e.cause, depth + 1);
}

export class ControlPlaneGate {
  private running = 0;
  private readonly runningByAccount = new Map<string, number>();
  private readonly waitingByAccount = new Map<string, number>();
  private readonly queue: Waiter[] = [];

  constructor(
    private readonly options: ControlPlaneLimits & {
      /** GATEWAY_CONTROL_PLANE_TIMEOUT_MS: a request's waiting and database work together. */
      timeoutMs: number;
    },
  ) {}

  /** The deadline of a request that starts now. */
  deadline(): Deadline {
    return Date.now() + this.options.timeoutMs;
  }

  /** Operations running and waiting now (for tests and metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.queue.length };
  }

  /**
   * Runs `work` (one control-plane operation) once the account has a turn,
   * and answers 503 `control_plane_timeout` when the deadline passes first,
   * waiting or working. A turn is held until `work` has really finished, not
   * just until the caller was answered, so the limits count what PostgreSQL
   * is doing; the report pool's statement_timeout (the same budget) cancels
   * a statement that outlives its request.
   */
  async run<T>(accountId: string, work: () => Promise<T>, deadline: Deadline = this.deadline()): Promise<T> {
    if (Date.now() >= deadline) throw this.timedOut();
    await this.acquire(accountId, deadline);
    const working = (async () => work())().finally(() => this.release(accountId));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(this.timedOut()), Math.max(0, deadline - Date.now()));
      working.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(isStatementTimeout(error) ? this.timedOut(error) : error);
        },
      );
    });
  }

  private timedOut(cause?: unknown): AppError {
    return appError('controlPlaneTimeout', this.options.timeoutMs, { cause });
  }

  private canRun(accountId: string): boolean {
    return this.running < this.options.maxRunning && (this.runningByAccount.get(accountId) ?? 0) < this.options.maxRunningPerAccount;
  }

  private take(accountId: string): void {
    this.running += 1;
    this.runningByAccount.set(accountId, (this.runningByAccount.get(accountId) ?? 0) + 1);
  }

  private acquire(accountId: string, deadline: Deadline): Promise<void> {
    // Waiters are granted as soon as they can run, so one that can run now passes nobody.
    if (this.canRun(accountId)) {
      this.take(accountId);
      return Promise.resolve();
    }
    const { maxRunningPerAccount, maxWaitingPerAccount, maxWaiting } = this.options;
    const waitingHere = this.waitingByAccount.get(accountId) ?? 0;
    if (waitingHere >= maxWaitingPerAccount) {
      return Promise.reject(appError('controlPlaneQueueFull', { running: maxRunningPerAccount, waiting: maxWaitingPerAccount }));
    }
    if (this.queue.length >= maxWaiting) {
      return Promise.reject(appError('controlPlaneBusy'));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        accountId,
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        this.unwait(accountId);
        reject(this.timedOut());
      }, Math.max(0, deadline - Date.now()));
      this.queue.push(waiter);
      this.waitingByAccount.set(accountId, waitingHere + 1);
    });
  }

  private unwait(accountId: string): void {
    const left = (this.waitingByAccount.get(accountId) ?? 1) - 1;
    if (left <= 0) this.waitingByAccount.delete(accountId);
    else this.waitingByAccount.set(accountId, left);
  }

  private release(accountId: string): void {
    this.running -= 1;
    const left = (this.runningByAccount.get(accountId) ?? 1) - 1;
    if (left <= 0) this.runningByAccount.delete(accountId);
    else this.runningByAccount.set(accountId, left);
    // First come, first served among the accounts that are under their share.
    for (let i = 0; i < this.queue.length && this.running < this.options.maxRunning; ) {
      const waiter = this.queue[i]!;
      if (!this.canRun(waiter.accountId)) {
        i += 1;
        continue;
      }
      this.queue.splice(i, 1);
      this.unwait(waiter.accountId);
      this.take(waiter.accountId);
      waiter.grant();
    }
  }
}
