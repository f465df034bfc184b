// Serves the console (web/dist) at /console/: hashed assets cached for a
// year, index.html for every other page path (the app routes in the browser),
// /console redirected to /console/. The build is made first when missing.
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ensureConsoleBuild } from './console-build';
import { indexStaticFiles, requestedFile, type StaticFile } from './static-files';

export interface ConsoleOptions {
  logger: Logger;
  /** The console app's folder; defaults to web/ at the repository root. */
  webRoot?: string;
}

const PREFIX = '/console';
/** Vite puts content-hashed file names here: they never change, so they cache forever. */
const HASHED = 'assets/';
const GZIP_MIN_BYTES = 1024;

/** The page may load only its own files and talk only to its own origin (/graphql). */
const HTML_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export async function installConsole(server: FastifyInstance, options: ConsoleOptions): Promise<void> {
  let files: Map<string, StaticFile>;
  try {
    const { distDir } = await ensureConsoleBuild(options);
    files = await indexStaticFiles(distDir);
    if (!files.has('index.html')) throw new Error(`the console build in ${distDir} has no index.html`);
  } catch (error) {
    // The gateway's APIs do not depend on the console: keep them up and say why the page is not.
    options.logger.error({ err: error, component: 'console' }, 'the console could not be built; /console answers 503');
    const unavailable = async (_request: FastifyRequest, reply: FastifyReply) =>
      reply.code(503).send({ error: { code: 'console_unavailable', message: 'The console build is not available; see the gateway log' } });
    server.get(PREFIX, unavailable);
    server.get(`${PREFIX}/*`, unavailable);
    return;
  }
  const index = files.get('index.html')!;

  const serve = (request: FastifyRequest, reply: FastifyReply, rest: string) => {
    const key = requestedFile(rest);
    if (key === null) return notFound(reply);
    const file = key === '' ? index : files.get(key);
    if (file) return send(request, reply, file, key.startsWith(HASHED) ? 'public, max-age=31536000, immutable' : 'no-cache');
    // A missing asset is a 404 (never HTML in place of a script); any other
    // path is a page of the app, which routes in the browser.
    if (key.startsWith(HASHED) || /\.[a-z0-9]+$/i.test(key)) return notFound(reply);
    return send(request, reply, index, 'no-cache');
  };

  // The router ignores trailing slashes, so this route sees /console and /console/.
  server.get(PREFIX, async (request, reply) => {
    const [path, query] = splitUrl(request.url);
    if (!path.endsWith('/')) return reply.redirect(`${PREFIX}/${query}`, 302);
    return serve(request, reply, '');
  });
  server.get(`${PREFIX}/*`, async (request, reply) => serve(request, reply, splitUrl(request.url)[0].slice(PREFIX.length + 1)));
}

function splitUrl(url: string): [path: string, query: string] {
  const at = url.indexOf('?');
  return at < 0 ? [url, ''] : [url.slice(0, at), url.slice(at)];
}

/** The app's own not-found answer, as for any unknown path. */
function notFound(reply: FastifyReply) {
  return reply.callNotFound();
}

/** `gzip` listed in Accept-Encoding and not refused with `q=0`. */
const acceptsGzip = (header: string | undefined) =>
  (header ?? '').split(',').some((item) => {
    const [coding, ...params] = item.trim().toLowerCase().split(';');
    return coding?.trim() === 'gzip' && !params.some((param) => /^\s*q=0(\.0*)?\s*$/.test(param));
  });

const matchesEtag = (header: string | undefined, etag: string) =>
  header !== undefined && header.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*');

function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile, cacheControl: string) {
  void reply.header('content-type', file.contentType).header('cache-control', cacheControl).header('etag', file.etag);
  void reply.header('x-content-type-options', 'nosniff');
  if (file.contentType.startsWith('text/html')) void reply.headers(HTML_HEADERS);
  if (file.compressible) void reply.header('vary', 'accept-encoding');
  if (matchesEtag(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
  const gzip = file.compressible && file.size >= GZIP_MIN_BYTES && acceptsGzip(request.headers['accept-encoding']);
  if (!gzip) return reply.header('content-length', file.size).send(createReadStream(file.path));
  const body = pipeline(createReadStream(file.path), createGzip(), (error) => {
    if (error) request.log.warn({ err: error, file: file.path }, 'console file stream failed');
  });
  return reply.header('content-encoding', 'gzip').send(body);
}
