// Writes a new migration from the difference between the entities and the
// committed snapshot: `npm run migration:create` (needs a reachable database).
// Add the new class to src/db/migrations/index.ts, which the gateway runs.
import { loadConfig } from '../src/config';
import { openDatabase } from '../src/db/database';
import { entities } from '../src/entities';

const config = loadConfig();
const db = await openDatabase(config, { entities, authoring: true });
try {
  const blank = process.argv.includes('--blank');
  const result = await db.orm.migrator.create(undefined, blank);
  process.stdout.write(`${JSON.stringify({ file: result.fileName, empty: result.diff.up.length === 0 })}\n`);
} finally {
  await db.close();
}
