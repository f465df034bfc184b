// Ten thousand calls of every shape and failure leave nothing behind: after
// plain and streamed calls in both forms, upstream failures with and without
// fallback, resets mid-stream, client aborts and refused requests, the
// gateway holds no extra sockets or handles, no queued usage, and its heap
// (after GC) is about where it started.
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogJson, mockProvider } from '../../support/mock-catalog';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Shape {
  name: string;
  path: string;
  body: unknown;
  /** Destroy the request once the first response bytes arrive (or right away for plain calls). */
  abort?: 'after-first-byte' | 'immediately';
  badKey?: boolean;
  /** Statuses this shape may end with (0: aborted by us). */
  expect: number[];
}

const messages = (model: string, stream: boolean, text = 'How are leaks found?') => ({ model, max_tokens: 128, stream, messages: [{ role: 'user', content: text }] });
const chat = (model: string, stream: boolean) => ({ model, stream, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hello' }] });

const SHAPES: Shape[] = [
  { name: 'plain', path: '/v1/messages', body: messages('ok', false), expect: [200] },
  { name: 'stream', path: '/v1/messages', body: messages('ok', true), expect: [200] },
  { name: 'chat plain', path: '/v1/chat/completions', body: chat('ok', false), expect: [200] },
  { name: 'chat stream', path: '/v1/chat/completions', body: chat('ok', true), expect: [200] },
  { name: 'fallback', path: '/v1/messages', body: messages('fallback', true), expect: [200] },
  { name: 'all fail', path: '/v1/messages', body: messages('doomed', false), expect: [529] },
  { name: 'all fail, stream', path: '/v1/chat/completions', body: chat('doomed', true), expect: [529] },
  { name: 'reset', path: '/v1/messages', body: messages('resetting', true), expect: [200] },
  { name: 'abort mid-stream', path: '/v1/messages', body: messages('ok', true), abort: 'after-first-byte', expect: [0, 200] },
  { name: 'abort at once', path: '/v1/messages', body: messages('ok', false), abort: 'immediately', expect: [0, 200] },
  { name: 'bad key', path: '/v1/messages', body: messages('ok', false), badKey: true, expect: [401] },
  { name: 'bad body', path: '/v1/messages', body: { model: 'ok', messages: 'nope' }, expect: [400] },
  { name: 'unknown model', path: '/v1/chat/completions', body: chat('nope', false), expect: [404] },
];

function call(agent: http.Agent, port: number, key: string, shape: Shape): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(shape.body);
    const request = http.request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: shape.path,
        headers: {
          authorization: `Bearer ${shape.badKey ? 'tsxt-not-a-real-key' : key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        if (shape.abort === 'after-first-byte') {
          response.once('data', () => {
            request.destroy();
            resolve(0);
          });
        } else response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', () => resolve(0));
      },
    );
    request.on('error', (error) => (shape.abort ? resolve(0) : reject(error)));
    request.end(body);
    if (shape.abort === 'immediately') setImmediate(() => request.destroy());
  });
}

async function settle(t: TestApp, baseline?: { connections: number }): Promise<{ heapMb: number; handles: number; connections: number }> {
  const connections = async () => new Promise<number>((resolve) => t.app.server.server.getConnections((_e, n) => resolve(n)));
  const deadline = Date.now() + 5_000;
  // The set-up's own fetch (global keep-alive pool) may hold one idle connection throughout.
  while ((await connections()) > (baseline?.connections ?? 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  while (t.app.services.recorder.depth > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 200));
  t.logs.length = 0; // the harness keeps every log line; that is the test's memory, not the gateway's
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().length;
  return { heapMb: process.memoryUsage().heapUsed / 1048576, handles, connections: await connections() };
}

describe('faults: nothing leaks over 10,000 mixed calls', function () {
  this.timeout(120_000);
  let t: TestApp;
  let key: string;

  before(async () => {
    t = await startTestApp({
      catalog: catalogJson(
        {
          sim: mockProvider(),
          broken: mockProvider({ fail_rate: 1, fail_status: 503 }),
          resetting: mockProvider({ reset_after_chunks: 4 }),
        },
        {
          ok: [{ provider: 'sim', model: 'sim-ok' }],
          fallback: [
            { provider: 'broken', model: 'broken-1' },
            { provider: 'sim', model: 'sim-fallback' },
          ],
          doomed: [{ provider: 'broken', model: 'broken-2' }],
          resetting: [{ provider: 'resetting', model: 'resetting-1' }],
        },
      ),
    });
    const account = await createAccount(t);
    key = (await createKey(t, account.token, { model_scope: ['ok', 'fallback', 'doomed', 'resetting'] })).api_key;
  });

  after(async () => {
    await t?.close();
  });

  async function drive(total: number, concurrency: number): Promise<Map<string, Map<number, number>>> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const port = Number(new URL(t.baseUrl).port);
    const seen = new Map<string, Map<number, number>>();
    let next = 0;
    const worker = async () => {
      while (next < total) {
        const shape = SHAPES[next++ % SHAPES.length]!;
        const status = await call(agent, port, key, shape);
        const counts = seen.get(shape.name) ?? new Map<number, number>();
        counts.set(status, (counts.get(status) ?? 0) + 1);
        seen.set(shape.name, counts);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    agent.destroy();
    return seen;
  }

  it('returns to its baseline of sockets, handles, queued usage and heap', async () => {
    await drive(500, 32); // warm-up: JIT, pools, caches at their working size
    const before = await settle(t);
    const started = Date.now();
    const total = 10_000;
    const seen = await drive(total, 32);
    const elapsed = Date.now() - started;
    const after = await settle(t, before);

    const summary = [...seen].map(([name, counts]) => `${name} ${[...counts].map(([s, n]) => `${s}×${n}`).join('/')}`).join('; ');
    process.stdout.write(
      `      ${total} calls in ${(elapsed / 1000).toFixed(1)} s (${Math.round(total / (elapsed / 1000))}/s)\n` +
        `      heap after GC ${before.heapMb.toFixed(1)} → ${after.heapMb.toFixed(1)} MiB (${(after.heapMb - before.heapMb).toFixed(1)} MiB); ` +
        `handles ${before.handles} → ${after.handles}; open connections ${before.connections} → ${after.connections}; queued usage ${t.app.services.recorder.depth}\n` +
        `      ${summary}\n`,
    );

    for (const shape of SHAPES) {
      for (const status of seen.get(shape.name)?.keys() ?? []) expect(shape.expect, `${shape.name} answered ${status}`).to.include(status);
    }
    expect(after.connections).to.be.at.most(before.connections);
    expect(t.app.services.recorder.depth).to.equal(0);
    expect(after.handles).to.be.at.most(before.handles + 2);
    expect(after.heapMb - before.heapMb).to.be.lessThan(30);
  });
});
