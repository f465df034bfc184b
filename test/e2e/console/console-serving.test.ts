// How the gateway serves the console build at /console/ (no browser needed):
// redirect, SPA fallback, content types, caching, compression and no way out
// of web/dist.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { installConsole } from '../../../src/console/console';
import { ensureConsoleBuild } from '../../../src/console/console-build';
import { startTestApp, type TestApp } from '../../support/app';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request with the path sent exactly as written (fetch would normalise dot segments). */
function raw(t: TestApp, method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('console: serving web/dist at /console/', function () {
  this.timeout(30_000);
  let t: TestApp;
  let scriptPath: string;
  let stylePath: string;

  before(async function () {
    this.timeout(180_000);
    await ensureConsoleBuild({ logger: pino({ level: 'warn' }) });
    t = await startTestApp();
    const html = (await raw(t, 'GET', '/console/')).body.toString();
    scriptPath = /<script[^>]+src="([^"]+\.js)"/.exec(html)?.[1] ?? '';
    stylePath = /<link[^>]+href="([^"]+\.css)"/.exec(html)?.[1] ?? '';
  });
  after(async () => {
    await t?.close();
  });

  it('redirects /console to /console/, keeping the query', async () => {
    const plain = await raw(t, 'GET', '/console');
    expect(plain.status).to.equal(302);
    expect(plain.headers.location).to.equal('/console/');
    expect((await raw(t, 'GET', '/console?lang=en')).headers.location).to.equal('/console/?lang=en');
  });

  it('serves index.html with a strict content security policy and no caching', async () => {
    const page = await raw(t, 'GET', '/console/');
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(page.headers['cache-control']).to.equal('no-cache');
    expect(page.headers['content-security-policy']).to.contain("default-src 'self'").and.to.contain("frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).to.equal('nosniff');
    expect(page.body.toString()).to.contain('<div id="root"></div>');
    expect(scriptPath).to.match(/^\/console\/assets\/[\w-]+\.js$/);
    expect(stylePath).to.match(/^\/console\/assets\/[\w-]+\.css$/);
    const head = await raw(t, 'HEAD', '/console/');
    expect(head.status).to.equal(200);
    expect(Number(head.headers['content-length'])).to.equal(page.body.length);
    expect(head.body.length).to.equal(0);
  });

  it('answers page paths of the app with index.html (SPA fallback)', async () => {
    const index = (await raw(t, 'GET', '/console/')).body.toString();
    for (const path of ['/console/keys', '/console/keys/key_01HZX/usage', '/console/index.html']) {
      const page = await raw(t, 'GET', path);
      expect(page.status, path).to.equal(200);
      expect(page.headers['content-type'], path).to.equal('text/html; charset=utf-8');
      expect(page.body.toString(), path).to.equal(index);
    }
  });

  it('serves hashed assets with their content type, a year of caching, gzip and ETags', async () => {
    const script = await raw(t, 'GET', scriptPath);
    expect(script.status).to.equal(200);
    expect(script.headers['content-type']).to.equal('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
    expect(Number(script.headers['content-length'])).to.equal(script.body.length);
    const style = await raw(t, 'GET', stylePath);
    expect(style.headers['content-type']).to.equal('text/css; charset=utf-8');

    const zipped = await raw(t, 'GET', scriptPath, { 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(zipped.headers.vary).to.equal('accept-encoding');
    expect(zipped.body.length).to.be.lessThan(script.body.length / 2);
    expect(gunzipSync(zipped.body).equals(script.body)).to.equal(true);

    const etag = String(script.headers.etag);
    const again = await raw(t, 'GET', scriptPath, { 'if-none-match': etag });
    expect(again.status).to.equal(304);
    expect(again.body.length).to.equal(0);
  });

  it('answers a missing asset with 404, never with HTML', async () => {
    for (const path of ['/console/assets/missing-abc123.js', '/console/favicon.ico', '/console/robots.txt']) {
      const response = await raw(t, 'GET', path);
      expect(response.status, path).to.equal(404);
      expect(response.headers['content-type'], path).to.match(/^application\/json/);
    }
  });

  it('never serves a file outside web/dist, nor its dot-files', async () => {
    const attempts = [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/..%2fpackage.json',
      '/console/%2e%2e%2f%2e%2e%2fpackage.json',
      '/console/assets/..%2f..%2f..%2fpackage.json',
      '/console/..%5c..%5cpackage.json',
      '/console/%00index.html',
      '/console/%E0%A4%A.js',
      '/console/.source-hash',
      '/console/../web/vite.config.ts',
      '/console/../../src/config.ts',
    ];
    for (const path of attempts) {
      const response = await raw(t, 'GET', path);
      const body = response.body.toString();
      expect(body, path).not.to.contain('"tsxt-gateway"');
      expect(body, path).not.to.contain('defineConfig');
      expect(body, path).not.to.contain('process.env');
      expect(body, path).not.to.match(/^[0-9a-f]{64}\s*$/);
      expect([200, 400, 404], `${path} → ${response.status}`).to.include(response.status);
      if (response.status === 200) expect(response.headers['content-type'], path).to.equal('text/html; charset=utf-8');
    }
  });

  it('keeps the gateway up with /console answering 503 when no build can be made', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'gw-console-'));
    const lines: string[] = [];
    const server = Fastify();
    try {
      const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
      await installConsole(server, { logger, webRoot: empty });
      const response = await server.inject({ method: 'GET', url: '/console/' });
      expect(response.statusCode).to.equal(503);
      expect(response.json().error.code).to.equal('console_unavailable');
      expect(lines.join('')).to.contain('the console could not be built');
    } finally {
      await server.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});
