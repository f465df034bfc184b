// For PostgreSQL repositories whose insert answers "taken" rather than
// throwing a driver error: the unique violation becomes a result here, so no
// service sees the ORM's exception.
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';

/** Flushes what is pending; false (the unit of work must then fail) when a unique constraint refused it. */
export async function flushUnlessTaken(em: EntityManager): Promise<boolean> {
  try {
    await em.flush();
    return true;
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) return false;
    throw error;
  }
}
