import path from 'node:path';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, defineConfig, type Options } from '@mikro-orm/postgresql';
import { PROJECT_ROOT } from '../paths';
import { MIGRATIONS } from './migrations/index';

const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'src', 'db', 'migrations');

/** Tables maintained by hand-written SQL migrations (partitioning is not expressible in entities). */
export const SQL_MANAGED_TABLES = [/^usage_records/, 'account_month_usage', 'settlement_closures', 'credit_leases'];

/** The entities the ORM maps: the composition root's list (src/entities.ts), so this layer imports nothing above it. */
export type EntityList = NonNullable<Options['entities']>;

export interface OrmOptionsExtra {
  poolMax?: number;
  /**
   * Discover migrations in src/db/migrations (TypeScript files, so a loader
   * is needed) instead of running the compiled-in list: for authoring them
   * (`npm run migration:create`, the MikroORM CLI).
   */
  authoring?: boolean;
}

export function ormOptions(clientUrl: string, entities: EntityList, extra: OrmOptionsExtra = {}): Options {
  const { poolMax = 20, authoring = false } = extra;
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    migrations: {
      ...(authoring ? { path: MIGRATIONS_DIR, pathTs: MIGRATIONS_DIR, glob: '!(index|*.d).{js,ts}' } : { migrationsList: MIGRATIONS }),
      emit: 'ts',
      // The snapshot lives beside the migration files and serves authoring only.
      snapshot: authoring,
      snapshotName: '.snapshot',
      silent: true,
    },
    schemaGenerator: { skipTables: SQL_MANAGED_TABLES },
    allowGlobalContext: false,
    debug: false,
  });
}

export async function openOrm(clientUrl: string, entities: EntityList, extra?: OrmOptionsExtra): Promise<MikroORM> {
  return MikroORM.init(ormOptions(clientUrl, entities, extra));
}

/** Applies committed migrations; called at start-up and once per test run. */
export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}
