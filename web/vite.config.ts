// Vite build of the console (`vite build --config web/vite.config.ts`, or
// src/console/console-build.ts at start-up). Served by the gateway at
// /console/; everything is bundled, so the build needs no network.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { BUILD_STAMP, consoleSourceHash } from '../src/console/console-sources.ts';

const webRoot = fileURLToPath(new URL('.', import.meta.url));

/** Stamps the build with the hash of its sources, so a stale web/dist is rebuilt at start-up. */
function sourceStamp(): Plugin {
  return {
    name: 'tsxt-console-source-stamp',
    apply: 'build',
    async generateBundle() {
      const hash = await consoleSourceHash(webRoot);
      if (hash !== null) this.emitFile({ type: 'asset', fileName: BUILD_STAMP, source: `${hash}\n` });
    },
  };
}

export default defineConfig({
  root: webRoot,
  base: '/console/',
  // No public/ folder: every served file comes out of the bundle.
  publicDir: false,
  plugins: [react(), sourceStamp()],
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
