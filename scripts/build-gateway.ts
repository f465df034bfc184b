// Compiles the gateway into one ES module, dist/main.mjs (with a source map),
// which `npm start` then runs on plain Node: no TypeScript loader thread and
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

/** Builds dist/main.mjs; a private folder and renames keep concurrent builders from serving half a file. */
export async function buildGateway(): Promise<string> {
  const dist = path.dirname(GATEWAY_BUNDLE);
  await mkdir(dist, { recursive: true });
  const staging = await mkdtemp(path.join(dist, '.build-'));
  try {
    await build({
      entryPoints: [path.join(PROJECT_ROOT, 'src', 'main.ts')],
      outfile: path.join(staging, 'main.mjs'),
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      tsconfig: path.join(PROJECT_ROOT, 'tsconfig.json'),
      logLevel: 'warning',
    });
    await rename(path.join(staging, 'main.mjs.map'), `${GATEWAY_BUNDLE}.map`);
    await rename(path.join(staging, 'main.mjs'), GATEWAY_BUNDLE);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return GATEWAY_BUNDLE;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(PROJECT_ROOT, 'scripts', 'build-gateway.ts')) {
  await buildGateway();
}
