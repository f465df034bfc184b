// Makes sure web/dist holds a build of the current console sources: used by
// installConsole at start-up (so `npm ci && npm start` suffices) and by the
// browser tests. A build goes to a private directory and is swapped in with
// renames, so concurrent starters never serve a half-written build.
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Logger as ViteLogger } from 'vite';
import { PROJECT_ROOT } from '../paths';
import { BUILD_STAMP, consoleSourceHash } from './console-sources';

/** The console app's folder (web/ at the repository root). */
export const WEB_ROOT = join(PROJECT_ROOT, 'web');

export interface ConsoleBuildOptions {
  logger: Logger;
  /** Defaults to WEB_ROOT. */
  webRoot?: string;
}

export interface ConsoleBuild {
  distDir: string;
  /** Whether this call ran Vite (the build was missing or stale). */
  built: boolean;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function stampOf(distDir: string): Promise<string | null> {
  try {
    return (await readFile(join(distDir, BUILD_STAMP), 'utf8')).trim();
  } catch {
    return null;
  }
}

/**
 * Builds web/dist with Vite's programmatic API when it is missing or was
 * built from other sources. Without web/src (a deployment that ships only the
 * build) an existing web/dist is used as it is.
 */
export async function ensureConsoleBuild(options: ConsoleBuildOptions): Promise<ConsoleBuild> {
  const webRoot = options.webRoot ?? WEB_ROOT;
  const distDir = join(webRoot, 'dist');
  const log = options.logger.child({ component: 'console-build' });
  const hasIndex = await exists(join(distDir, 'index.html'));
  const sources = await consoleSourceHash(webRoot);
  if (sources === null) {
    if (hasIndex) return { distDir, built: false };
    throw new Error(`the console has neither sources (${join(webRoot, 'src')}) nor a build (${distDir})`);
  }
  if (hasIndex && (await stampOf(distDir)) === sources) return { distDir, built: false };

  log.info({ dist: distDir, reason: hasIndex ? 'stale' : 'missing' }, 'building the console with Vite');
  const started = Date.now();
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const staging = join(webRoot, `.dist-${suffix}`);
  try {
    // Loaded only when needed: a start-up with a fresh build never pays for Vite.
    const { build } = await import('vite');
    await build({
      configFile: join(webRoot, 'vite.config.ts'),
      logLevel: 'warn',
      customLogger: viteLogger(log),
      build: { outDir: staging, emptyOutDir: true },
    });
    await swapIn(staging, distDir, sources, join(webRoot, `.dist-old-${suffix}`));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  log.info({ dist: distDir, ms: Date.now() - started }, 'console built');
  return { distDir, built: true };
}

/** Replaces distDir with staging; a concurrent starter that got there first with the same sources wins. */
async function swapIn(staging: string, distDir: string, sources: string, parking: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if ((await stampOf(distDir)) === sources && (await exists(join(distDir, 'index.html')))) return;
    try {
      if (await exists(distDir)) await rename(distDir, parking);
      await rename(staging, distDir);
      await rm(parking, { recursive: true, force: true });
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another process renamed at the same moment: look again.
      if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  }
  throw new Error(`could not move the console build into ${distDir}`);
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** Vite's messages go to the gateway's logger, never straight to the terminal. */
function viteLogger(log: Logger): ViteLogger {
  const warned = new Set<string>();
  const errors = new WeakSet<object>();
  const clean = (message: string) => message.replace(ANSI, '').trim();
  const logger: ViteLogger = {
    hasWarned: false,
    info: (message) => log.debug(clean(message)),
    warn: (message) => {
      logger.hasWarned = true;
      log.warn(clean(message));
    },
    warnOnce: (message) => {
      if (warned.has(message)) return;
      warned.add(message);
      logger.warn(message);
    },
    error: (message, options) => {
      if (options?.error) errors.add(options.error);
      log.error(clean(message));
    },
    clearScreen: () => undefined,
    hasErrorLogged: (error) => errors.has(error),
  };
  return logger;
}
