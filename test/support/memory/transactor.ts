// Units of work in memory, for domain unit tests: one at a time (as if every
// unit of work locked what it touches), and a failed one leaves every table
// as it found it. Change notices are kept only for units that committed.
import type { Channel } from '../../../src/db/change-feed';
import type { Transactor, Tx } from '../../../src/domain/transaction';

/** A table that can be put back as it was when a unit of work began. */
export interface MemoryTable {
  /** Takes a copy of the rows now; calling what it returns restores that copy. */
  snapshot(): () => void;
}

export class MemoryTransactor implements Transactor {
  /** Notices of committed units, in commit order. */
  readonly notices: Array<{ channel: Channel; id: string }> = [];
  /** Units of work that committed / rolled back. */
  commits = 0;
  rollbacks = 0;
  private readonly tables: MemoryTable[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  /** Tables restored when a unit of work fails. */
  register(...tables: MemoryTable[]): this {
    this.tables.push(...tables);
    return this;
  }

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const next = this.queue.then(() => this.once(work));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async once<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const restores = this.tables.map((t) => t.snapshot());
    const pending: Array<{ channel: Channel; id: string }> = [];
    const tx: Tx = {
      notify: async (channel, id) => {
        pending.push({ channel, id });
      },
    };
    try {
      const result = await work(tx);
      this.notices.push(...pending);
      this.commits += 1;
      return result;
    } catch (error) {
      for (const restore of restores) restore();
      this.rollbacks += 1;
      throw error;
    }
  }
}

/** Rows kept by id, with snapshot/restore for the transactor. */
export class MemoryRows<R extends { id: string }> implements MemoryTable {
  readonly rows = new Map<string, R>();

  snapshot(): () => void {
    const copy = new Map([...this.rows].map(([id, row]) => [id, structuredClone(row)]));
    return () => {
      this.rows.clear();
      for (const [id, row] of copy) this.rows.set(id, row);
    };
  }

  all(): R[] {
    return [...this.rows.values()];
  }
}

/** The error a promise is rejected with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}
