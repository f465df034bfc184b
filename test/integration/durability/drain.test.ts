// SIGTERM drains the gateway (docs/architecture.md §15): the listener closes at once, calls
// and streams in flight finish within GATEWAY_SHUTDOWN_GRACE_MS, each with
// exactly one usage record, and the process exits 0. Streams that outlive the
// grace period are cut with an `error` event and metered as such.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freePort, testDatabase } from '../../support/db';
import { killGateway, startGateway, waitReady, type GatewayProcess } from '../../support/gateway-process';
import { catalogJson, mockProvider } from '../../support/mock-catalog';
import { messagesBody, startCall, type CallResult } from '../../support/sse-client';

interface Running {
  gateway: GatewayProcess;
  base: string;
  key: { api_key: string; api_key_id: string };
}

/** A request on a fresh connection: either refused at TCP level or answered (the status). */
function probe(base: string): Promise<{ status?: number; code?: string }> {
  return new Promise((resolve) => {
    const request = http.request(`${base}/healthz`, { agent: false }, (response) => {
      response.resume();
      resolve({ status: response.statusCode! });
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ code: error.code ?? error.message }));
    request.end();
  });
}

describe('durability: graceful drain on SIGTERM', function () {
  this.timeout(120_000);
  let dir: string;
  const running: Running[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-drain-'));
  });

  after(async () => {
    for (const r of running) killGateway(r.gateway);
    await rm(dir, { recursive: true, force: true });
  });

  async function boot(graceMs: number, providers: Record<string, unknown>): Promise<Running> {
    const db = await testDatabase();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = `tsxs_test_${randomBytes(16).toString('hex')}`;
    const catalogPath = path.join(dir, `catalog-${port}.json`);
    const models = Object.fromEntries(Object.keys(providers).map((name) => [name, [{ provider: name, model: `${name}-model` }]]));
    await writeFile(catalogPath, JSON.stringify(catalogJson(providers, models)));
    const gateway = await startGateway({
      DATABASE_URL: db.url,
      PORT: String(port),
      GATEWAY_BOOTSTRAP_TOKEN: token,
      GATEWAY_CATALOG: catalogPath,
      GATEWAY_SHUTDOWN_GRACE_MS: String(graceMs),
    });
    const r: Running = { gateway, base, key: { api_key: '', api_key_id: '' } };
    running.push(r);
    await waitReady(base, gateway);
    const created = await fetch(`${base}/api/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ name: `drain-${randomBytes(4).toString('hex')}`, dimension: '部门', model_scope: Object.keys(providers) }),
    });
    expect(created.status, await created.clone().text()).to.equal(201);
    r.key = (await created.json()) as Running['key'];
    return r;
  }

  async function records(keyId: string) {
    const db = await testDatabase();
    const rows = await db.pool.query<{ request_id: string; status: string; error_code: string | null; tokens_output: number; stream: boolean }>(
      'select request_id, status, error_code, tokens_output, stream from usage_records where api_key_id = $1',
      [keyId],
    );
    return rows.rows;
  }

  const kinds = (result: CallResult) => result.events.map((e) => e.event);

  it('lets in-flight streams and calls finish, meters each once, refuses new connections and exits 0', async () => {
    // Streams of ~2 s (about 30 chunks 60 ms apart); plain calls that take 1.5 s before answering.
    const r = await boot(15_000, {
      slow: mockProvider({ latency_ms: 100, chunk_delay_ms: 60, chunk_chars: 8 }),
      lazy: mockProvider({ latency_ms: 1_500 }),
    });
    const streams = Array.from({ length: 6 }, (_, i) => startCall(r.base, r.key.api_key, messagesBody('slow', true, `stream number ${i}`)));
    const plains = Array.from({ length: 6 }, (_, i) => startCall(r.base, r.key.api_key, messagesBody('lazy', false, `plain number ${i}`)));
    await Promise.all(streams.map((s) => s.firstByte));

    const signalledAt = Date.now();
    process.kill(r.gateway.child.pid!, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = await probe(r.base);
    expect(late.code === 'ECONNREFUSED' || late.status === 503, `request after SIGTERM: ${JSON.stringify(late)}`).to.equal(true);

    const streamed = await Promise.all(streams.map((s) => s.done));
    const plain = await Promise.all(plains.map((s) => s.done));
    const exit = await r.gateway.exited;
    const drainMs = Date.now() - signalledAt;
    process.stdout.write(`      drained ${streamed.length} streams and ${plain.length} calls in ${drainMs} ms after SIGTERM; exit ${exit}\n`);

    for (const s of streamed) {
      expect(s.status).to.equal(200);
      expect(kinds(s).at(-1), `stream ${s.requestId}: ${kinds(s).join(',')}`).to.equal('message_stop');
      expect(kinds(s)).to.not.include('error');
    }
    for (const p of plain) {
      expect(p.status, JSON.stringify(p.body)).to.equal(200);
      expect(p.body.usage.output_tokens).to.be.greaterThan(0);
    }
    expect(exit, r.gateway.stderr()).to.equal(0);

    const rows = await records(r.key.api_key_id);
    const ids = [...streamed, ...plain].map((c) => c.requestId!);
    expect(rows.map((row) => row.request_id).sort()).to.deep.equal([...ids].sort());
    expect(rows.every((row) => row.status === 'ok')).to.equal(true);
  });

  it('cuts streams that outlive the grace period with an error event, meters what they produced, and exits 0', async () => {
    // Streams of ~4 s against a grace period of 700 ms.
    const r = await boot(700, { slow: mockProvider({ latency_ms: 50, chunk_delay_ms: 120, chunk_chars: 8 }) });
    const streams = Array.from({ length: 4 }, (_, i) => startCall(r.base, r.key.api_key, messagesBody('slow', true, `long stream ${i}`)));
    await Promise.all(streams.map((s) => s.firstByte));
    await new Promise((resolve) => setTimeout(resolve, 300));

    const signalledAt = Date.now();
    process.kill(r.gateway.child.pid!, 'SIGTERM');
    const streamed = await Promise.all(streams.map((s) => s.done));
    const exit = await r.gateway.exited;
    const drainMs = Date.now() - signalledAt;
    process.stdout.write(`      cut ${streamed.length} streams; exited ${drainMs} ms after SIGTERM (grace 700 ms); exit ${exit}\n`);

    for (const s of streamed) {
      expect(s.status).to.equal(200);
      const last = s.events.at(-1)!;
      expect(last.event, kinds(s).join(',')).to.equal('error');
      expect(last.data.error.type).to.equal('overloaded_error');
      expect(kinds(s)).to.not.include('message_stop');
    }
    expect(exit, r.gateway.stderr()).to.equal(0);
    expect(drainMs).to.be.lessThan(5_000);

    const rows = await records(r.key.api_key_id);
    expect(rows.map((row) => row.request_id).sort()).to.deep.equal(streamed.map((s) => s.requestId!).sort());
    for (const row of rows) {
      expect(row).to.include({ status: 'upstream_error', error_code: 'shutting_down', stream: true });
      expect(row.tokens_output, 'what was streamed before the cut is billed').to.be.greaterThan(0);
    }
  });
});
