import { fileURLToPath } from 'node:url';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, defineConfig, type Options } from '@mikro-orm/postgresql';
import { entities } from './entities/index';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

/** Tables maintained by hand-written SQL migrations (partitioning is not expressible in entities). */
export const SQL_MANAGED_TABLES = [/^usage_records/, 'account_month_usage', 'settlement_closures'];

export function ormOptions(clientUrl: string, poolMax = 20): Options {
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    migrations: {
      path: MIGRATIONS_DIR,
      pathTs: MIGRATIONS_DIR,
      glob: '!(*.d).{js,ts}',
      emit: 'ts',
      snapshot: true,
      snapshotName: '.snapshot',
      silent: true,
    },
    schemaGenerator: { skipTables: SQL_MANAGED_TABLES },
    allowGlobalContext: false,
    debug: false,
  });
}

export async function openOrm(clientUrl: string, poolMax?: number): Promise<MikroORM> {
  return MikroORM.init(ormOptions(clientUrl, poolMax));
}

/** Applies committed migrations; called at start-up and once per test run. */
export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}
