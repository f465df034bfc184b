// Compiles the gateway into ES modules, dist/main.mjs (the entry,
// src/entry.ts) and dist/gateway.mjs (src/main.ts and all it imports), with
// source maps, which `npm start` then runs on plain Node: no TypeScript loader thread and
// no module-loading hooks in the serving process, which saves about 70 MB of
// memory and start-up time (see README "Benchmarks"). Our own sources are
// bundled; packages stay in node_modules and load as usual. Takes under a
// second, so `npm start` always rebuilds.
//
// The bundle sits one folder below the repository root, as src/*.ts do, so
// src/paths.ts finds openapi/ and web/ from either.
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { PROJECT_ROOT } from '../src/paths';

export const GATEWAY_BUNDLE = path.join(PROJECT_ROOT, 'dist', 'main.mjs');

/** Builds dist/main.mjs and dist/gateway.mjs; a private folder and renames keep concurrent builders from serving half a file. */
export async function buildGateway(): Promise<string> {
  const dist = path.dirname(GATEWAY_BUNDLE);
  await mkdir(dist, { recursive: true });
  const staging = await mkdtemp(path.join(dist, '.build-'));
  try {
    const common = {
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      tsconfig: path.join(PROJECT_ROOT, 'tsconfig.json'),
      logLevel: 'warning',
    } as const;
    await build({ ...common, entryPoints: [path.join(PROJECT_ROOT, 'src', 'main.ts')], outfile: path.join(staging, 'gateway.mjs') });
    await build({ ...common, entryPoints: [path.join(PROJECT_ROOT, 'src', 'entry.ts')], outfile: path.join(staging, 'main.mjs') });
    // The gateway first: the entry imports it.
    for (const file of ['gateway.mjs.map', 'gateway.mjs', 'main.mjs.map', 'main.mjs']) await rename(path.join(staging, file), path.join(dist, file));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return GATEWAY_BUNDLE;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(PROJECT_ROOT, 'scripts', 'build-gateway.ts')) {
  await buildGateway();
}
