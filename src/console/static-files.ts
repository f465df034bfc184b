// The files of a build directory, indexed once: only files found at
// start-up are ever served, so no request path can reach outside the build.
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';

export interface StaticFile {
  /** Absolute path on disk. */
  path: string;
  size: number;
  contentType: string;
  etag: string;
  /** Whether gzip is worth it (text formats). */
  compressible: boolean;
}

const TYPES: Record<string, [type: string, compressible: boolean]> = {
  '.html': ['text/html; charset=utf-8', true],
  '.js': ['text/javascript; charset=utf-8', true],
  '.mjs': ['text/javascript; charset=utf-8', true],
  '.css': ['text/css; charset=utf-8', true],
  '.json': ['application/json; charset=utf-8', true],
  '.map': ['application/json; charset=utf-8', true],
  '.svg': ['image/svg+xml', true],
  '.txt': ['text/plain; charset=utf-8', true],
  '.webmanifest': ['application/manifest+json', true],
  '.png': ['image/png', false],
  '.jpg': ['image/jpeg', false],
  '.jpeg': ['image/jpeg', false],
  '.gif': ['image/gif', false],
  '.webp': ['image/webp', false],
  '.avif': ['image/avif', false],
  '.ico': ['image/x-icon', false],
  '.woff': ['font/woff', false],
  '.woff2': ['font/woff2', false],
  '.wasm': ['application/wasm', false],
};

export function contentTypeOf(name: string): { contentType: string; compressible: boolean } {
  const [contentType, compressible] = TYPES[extname(name).toLowerCase()] ?? ['application/octet-stream', false];
  return { contentType, compressible };
}

/** Every regular file under root (dot-files and dot-folders skipped), keyed by its URL path relative to root. */
export async function indexStaticFiles(root: string): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const info = await stat(path);
        const key = relative(root, path).split(sep).join('/');
        const tag = createHash('sha1').update(`${key}:${info.size}:${info.mtimeMs}`).digest('base64url').slice(0, 16);
        files.set(key, { path, size: info.size, etag: `W/"${tag}"`, ...contentTypeOf(entry.name) });
      }
    }
  };
  await walk(root);
  return files;
}

/**
 * The index key a request path names, or null when the path is not a
 * plain relative file path (dot segments or dot-files, backslashes, NUL, bad escapes).
 */
export function requestedFile(urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/').filter((segment) => segment !== '');
  // Dot segments never name a file here, and dot-files (the build stamp) are not served.
  if (segments.some((segment) => segment.startsWith('.'))) return null;
  return segments.join('/');
}
