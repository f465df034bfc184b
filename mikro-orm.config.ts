// For tools that look for a MikroORM config file. The gateway itself builds the
// same options in src/db/orm.ts; an unset DATABASE_URL means the embedded
// PostgreSQL that `npm start` runs.
import path from 'node:path';
import { loadConfig } from './src/config';
import { embeddedDatabaseUrl } from './src/db/embedded';
import { ormOptions } from './src/db/orm';
import { entities } from './src/entities';

const config = loadConfig();
// The embedded cluster's URL carries the role's password from the data directory's credentials file.
export default ormOptions(config.databaseUrl ?? (await embeddedDatabaseUrl(path.join(config.dataDir, 'pg'), config.embeddedPgPort, 'gateway', config.systemDataDir)), entities, {
  authoring: true,
});
