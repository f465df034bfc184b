// Units of work on PostgreSQL: one transaction on a fresh EntityManager fork
// (`inTransaction`, which avoids MikroORM's AsyncLocalStorage). PostgreSQL
// repositories reach the transaction's EntityManager through `emOf(tx)`.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { notifyChange, type Channel } from '../db/change-feed';
import { inTransaction } from '../db/transaction';
import type { Transactor, Tx } from './transaction';

class PgTx implements Tx {
  constructor(readonly em: EntityManager) {}

  notify(channel: Channel, id: string): Promise<void> {
    return notifyChange(this.em, channel, id);
  }
}

export class PgTransactor implements Transactor {
  constructor(private readonly orm: MikroORM) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return inTransaction(this.orm, (em) => work(new PgTx(em)));
  }
}

/** The transaction's EntityManager; a Tx of another store here is a wiring mistake. */
export function emOf(tx: Tx): EntityManager {
  if (!(tx instanceof PgTx)) throw new TypeError('a PostgreSQL repository was handed a unit of work of another store');
  return tx.em;
}
