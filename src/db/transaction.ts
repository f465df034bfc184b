// One unit of work in one database transaction, on a fresh fork.
//
// MikroORM's `em.transactional()` carries the transaction through an
// AsyncLocalStorage. On Node 20 the first `AsyncLocalStorage.run()` installs
// promise hooks for the whole process, for good: every promise of every data-
// plane call then pays for them (a visible share of the gateway's CPU in
// `npm run bench`). Our services hand the EntityManager down explicitly, so
// `begin`/`commit` on the fork gives the same transaction without it.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

export async function inTransaction<T>(orm: MikroORM, work: (em: EntityManager) => Promise<T>): Promise<T> {
  const em = orm.em.fork();
  await em.begin();
  try {
    const result = await work(em);
    // Flushes what `work` left pending, then commits.
    await em.commit();
    return result;
  } catch (error) {
    if (em.isInTransaction()) await em.rollback();
    throw error;
  }
}
