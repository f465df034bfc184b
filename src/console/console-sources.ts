// A fingerprint of the console's sources, stamped into every build (by the
// plugin in web/vite.config.ts), so the gateway can tell a stale web/dist
// from a fresh one and rebuild it at start-up.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** Written into the build output; dot-files are never served. */
export const BUILD_STAMP = '.source-hash';

/** What the build is made of, relative to web/. */
const INPUTS = ['index.html', 'vite.config.ts', 'src'];

async function listFiles(path: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return [path];
    if (code === 'ENOENT') return [];
    throw error;
  }
  const nested = await Promise.all(entries.map((entry) => (entry.isDirectory() ? listFiles(join(path, entry.name)) : [join(path, entry.name)])));
  return nested.flat();
}

/** SHA-256 over the sorted paths and contents of the console's inputs; null when web/src is absent. */
export async function consoleSourceHash(webRoot: string): Promise<string | null> {
  const files = (await Promise.all(INPUTS.map((input) => listFiles(join(webRoot, input))))).flat();
  if (!files.some((file) => relative(webRoot, file).startsWith(`src${sep}`))) return null;
  const hash = createHash('sha256');
  for (const file of files.map((path) => relative(webRoot, path).split(sep).join('/')).sort()) {
    hash.update(`${file}\0`);
    hash.update(await readFile(join(webRoot, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}
