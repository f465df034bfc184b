// PostgreSQL stops under load and comes back (docs/architecture.md §8). The gateway refuses
// to answer what it cannot meter: while the database is down, data-plane calls
// fail fast with a 503 in the caller's error form instead of hanging; when it
// is back the same process serves again (pool and change feed reconnect by
// themselves); and every call a client saw answered has its usage record.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { connectDatabase, type Database } from '../../../src/db/database';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../../src/db/embedded';
import { api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { freePort } from '../../support/db';
import { catalogJson, mockProvider } from '../../support/mock-catalog';
import { messagesBody, startCall, type CallResult } from '../../support/sse-client';
import { entities } from '../../../src/entities';

interface Outcome extends CallResult {
  stream: boolean;
  startedAt: number;
  endedAt: number;
  /** A 200 plain reply, or a stream that reached message_stop. */
  answered: boolean;
  failure?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('durability: PostgreSQL stops and restarts under load', function () {
  this.timeout(180_000);
  let dir: string;
  let embedded: EmbeddedDatabase | undefined;
  let database: Database | undefined;
  let t: TestApp | undefined;

  after(async () => {
    await t?.close().catch(() => undefined);
    await database?.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 within 2 s while it is down, serves again when it is back, and bills every answered call', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-db-restart-'));
    // As root, initdb runs as `postgres`, which must reach the directory.
    await chmod(dir, 0o755);
    embedded = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort(), database: 'gw_restart', persistent: true });
    database = await connectDatabase(embedded.url, { entities });
    t = await startTestApp({
      database,
      catalog: catalogJson({ sim: mockProvider({ chunk_delay_ms: 2 }) }, { fast: [{ provider: 'sim', model: 'sim-fast' }] }),
    });
    const app = t;
    const account = await createAccount(app);
    const key = (await createKey(app, account.token, { model_scope: ['fast'] })) as { api_key: string; api_key_id: string };

    const outcomes: Outcome[] = [];
    let running = true;
    const worker = async (n: number) => {
      for (let i = 0; running; i++) {
        const stream = (n + i) % 2 === 0;
        const startedAt = Date.now();
        try {
          const result = await startCall(app.baseUrl, key.api_key, messagesBody('fast', stream, `worker ${n} call ${i}`)).done;
          const answered = result.status === 200 && (!stream || result.events.at(-1)?.event === 'message_stop');
          outcomes.push({ ...result, stream, startedAt, endedAt: Date.now(), answered });
        } catch (error) {
          outcomes.push({ status: 0, requestId: null, body: null, events: [], ms: Date.now() - startedAt, stream, startedAt, endedAt: Date.now(), answered: false, failure: String(error) });
        }
        await sleep(10);
      }
    };
    const workers = Array.from({ length: 8 }, (_, n) => worker(n));

    await sleep(1_500);
    const stopping = Date.now();
    await embedded.stop();
    const stoppedAt = Date.now();
    await sleep(3_000);
    const feedWhileDown = app.app.services.changes.connected;
    const down = outcomes.filter((o) => o.startedAt >= stoppedAt);
    const restarting = Date.now();
    await embedded.start();
    const restartedAt = Date.now();

    // Served again by the same process, without a restart.
    let recoveredAt: number | undefined;
    while (Date.now() - restartedAt < 30_000) {
      if (outcomes.some((o) => o.startedAt >= restartedAt && o.answered)) {
        recoveredAt = Math.min(...outcomes.filter((o) => o.startedAt >= restartedAt && o.answered).map((o) => o.endedAt));
        break;
      }
      await sleep(50);
    }
    await sleep(1_000);
    running = false;
    await Promise.all(workers);

    const slowest = Math.max(...down.map((o) => o.ms));
    process.stdout.write(
      `      ${outcomes.length} calls; stop took ${stoppedAt - stopping} ms, restart ${restartedAt - restarting} ms; ` +
        `${down.length} calls while down, slowest 503 after ${slowest} ms; ` +
        `first answer ${recoveredAt === undefined ? 'never' : `${recoveredAt - restartedAt} ms`} after the restart\n`,
    );

    // Down: every call fails fast with a 503 in the Anthropic error form.
    expect(down.length).to.be.greaterThan(20);
    for (const o of down) {
      expect(o.status, JSON.stringify(o.body ?? o.failure)).to.equal(503);
      expect(o.body).to.include({ type: 'error' });
      expect(o.body.error.type).to.equal('overloaded_error');
      expect(o.body.request_id).to.equal(o.requestId);
    }
    expect(slowest).to.be.lessThan(2_000);

    // Back: served again, the change feed is listening again, /readyz is green.
    expect(recoveredAt, 'an answer after the restart').to.not.equal(undefined);
    expect(feedWhileDown, 'the change feed noticed the database was gone').to.equal(false);
    const deadline = Date.now() + 10_000;
    while (!app.app.services.changes.connected && Date.now() < deadline) await sleep(100);
    expect(app.app.services.changes.connected, 'change feed reconnected').to.equal(true);
    expect((await fetch(`${app.baseUrl}/readyz`)).status).to.equal(200);
    const late = outcomes.filter((o) => o.startedAt >= recoveredAt! + 200);
    expect(late.length).to.be.greaterThan(0);
    expect(late.every((o) => o.answered), 'every call after recovery answered').to.equal(true);

    // No answered call went unbilled, and none was billed twice.
    const rows = await database.pool.query<{ request_id: string; n: number }>(
      'select request_id, count(*)::int as n from usage_records where api_key_id = $1 group by request_id',
      [key.api_key_id],
    );
    const recorded = new Map(rows.rows.map((r) => [r.request_id, r.n]));
    const answered = outcomes.filter((o) => o.answered);
    expect(answered.filter((o) => !recorded.has(o.requestId!)).map((o) => o.requestId), 'answered calls without a usage record').to.deep.equal([]);
    expect([...recorded.values()].every((n) => n === 1), 'a request recorded twice').to.equal(true);
    expect(outcomes.filter((o) => o.status >= 500 && o.status !== 503).map((o) => o.status), 'other 5xx').to.deep.equal([]);
    expect(outcomes.filter((o) => o.failure !== undefined).map((o) => o.failure), 'transport failures').to.deep.equal([]);

    // The reconnected feed really listens: a suspension made now reaches this process's key cache at once.
    expect((await startCall(app.baseUrl, key.api_key, messagesBody('fast', false)).done).status).to.equal(200);
    const suspended = await api(app, 'POST', `/api/v1/keys/${key.api_key_id}/suspend`, account.token);
    expect(suspended.status, JSON.stringify(suspended.body)).to.equal(200);
    const refused = await startCall(app.baseUrl, key.api_key, messagesBody('fast', false)).done;
    expect(refused.status).to.equal(403);
    expect(refused.body.error.type).to.equal('permission_error');
  });
});
