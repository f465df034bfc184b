// MikroORM 7 imports `globSync` from node:fs, which Node 20 lacks (it arrived
// in Node 22), so its module fails to link there. On Node 20 this redirects
// that one import to a shim that re-exports node:fs plus a `globSync` stub;
// MikroORM replaces the stub with tinyglobby (one of our dependencies) before
// it globs anything. Load with `--import ./src/compat/node20.mjs`; a no-op on
// Node >= 22.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('./node20-hooks.mjs', import.meta.url);
}
