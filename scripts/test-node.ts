// `npm run test:node -- <major> [mocha args…]`: runs the tests under another
// Node.js major (22, 24, …) than the one on the machine. The binary comes
// from the npm registry's `node-<platform>-<arch>` package (no install
// scripts), fetched once into ~/.cache/tsxt-gateway/node/<major>; it is not a
// dependency of the project because every CI install would then download it.
// Without mocha args it runs what `npm test` runs; .mocharc.json applies.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../src/paths';

const run = promisify(execFile);

/** The suites `npm test` runs (package.json "test"). */
const DEFAULT_SPECS = ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'];

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npm run test:node -- <node major, e.g. 22 or 24> [mocha args…]\n`);
  process.exit(2);
}

/** Where a major's binary is kept between runs (XDG_CACHE_HOME is honoured). */
function cacheDir(major: string): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'tsxt-gateway', 'node', major);
}

/** The node binary of `major`, downloaded (npm pack + tar) on first use. */
async function nodeBinary(major: string): Promise<string> {
  const dir = cacheDir(major);
  const binary = path.join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  const name = `node-${process.platform}-${process.arch}@${major}`;
  process.stderr.write(`fetching ${name} into ${dir} (once)\n`);
  await mkdir(path.dirname(dir), { recursive: true });
  // A staging folder renamed into place: an interrupted download never looks like a cached binary.
  const staging = await mkdtemp(`${dir}.partial-`);
  try {
    await run('npm', ['pack', name, '--pack-destination', staging, '--silent'], { cwd: staging, maxBuffer: 1 << 20 });
    const tarball = (await readdir(staging)).find((file) => file.endsWith('.tgz'));
    if (tarball === undefined) throw new Error(`npm pack ${name} wrote no tarball`);
    await run('tar', ['-xzf', tarball], { cwd: staging });
    await rm(path.join(staging, tarball));
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  if (!existsSync(binary)) throw new Error(`${name} has no bin/node`);
  return binary;
}

async function main(): Promise<void> {
  const [major, ...mochaArgs] = process.argv.slice(2);
  if (major === undefined) usage('which Node.js major?');
  if (!/^[1-9][0-9]?$/.test(major)) usage(`"${major}" is not a Node.js major version`);
  const node = await nodeBinary(major);
  const { stdout: version } = await run(node, ['--version']);
  process.stderr.write(`running mocha on Node.js ${version.trim()} (${node})\n`);
  const args = [path.join(PROJECT_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'), ...(mochaArgs.length > 0 ? mochaArgs : DEFAULT_SPECS)];
  // That node first on PATH too, so tests that start `node` or `npx` get the same version.
  const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
  const child = spawn(node, args, { cwd: PROJECT_ROOT, env, stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

main().catch((error: unknown) => {
  process.stderr.write(`test:node failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
