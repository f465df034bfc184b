// The domain's seam to its storage (docs/architecture.md §14.1). A service
// runs a change as one unit of work through a Transactor and hands the Tx to
// the repositories it writes through; it never sees the ORM. The PostgreSQL
// side is `pg-transactor.ts`; tests have an in-memory one
// (`test/support/memory/transactor.ts`).
import type { Channel } from '../db/change-feed';

/** One unit of work in progress: repositories write through it; it commits or rolls back as a whole. */
export interface Tx {
  /** Tells every gateway process of a change, once this unit of work commits (NOTIFY). */
  notify(channel: Channel, id: string): Promise<void>;
}

export interface Transactor {
  /** Runs `work` as one unit of work: every write through `tx` commits together, or none does. */
  run<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}
