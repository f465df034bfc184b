import { readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { MIGRATIONS } from '../../../src/db/migrations/index';
import { PROJECT_ROOT } from '../../../src/paths';

describe('the compiled-in migration list', () => {
  it('lists every migration file in src/db/migrations, in order, under its class name', () => {
    const dir = path.join(PROJECT_ROOT, 'src', 'db', 'migrations');
    const files = readdirSync(dir)
      .filter((file) => /^Migration.*\.ts$/.test(file))
      .map((file) => file.replace(/\.ts$/, ''))
      .sort();
    expect(MIGRATIONS.map((m) => m.name), 'add the new migration to src/db/migrations/index.ts').to.deep.equal(files);
    for (const entry of MIGRATIONS) expect(entry.class.name, entry.name).to.equal(entry.name);
  });
});
