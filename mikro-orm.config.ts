// For tools that look for a MikroORM config file. The gateway itself builds the
// same options in src/db/orm.ts; an unset DATABASE_URL means the embedded
// PostgreSQL that `npm start` runs.
import { loadConfig } from './src/config';
import { ormOptions } from './src/db/orm';

const config = loadConfig();
export default ormOptions(config.databaseUrl ?? `postgresql://gateway:gateway-local@127.0.0.1:${config.embeddedPgPort}/gateway`, {
  authoring: true,
});
