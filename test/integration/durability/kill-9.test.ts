// Every answered call is billed exactly once, even when the gateway process
// is killed with SIGKILL under load: the usage record is committed before the
// reply completes (group commit), so a 200 the client saw implies a record.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { freePort, testDatabase } from '../../support/db';

const ROOT = new URL('../../../', import.meta.url);

function startGateway(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', './src/compat/node20.mjs', '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
}

async function waitReady(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${base}/readyz`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('gateway did not become ready');
}

describe('durability: kill -9 under load', function () {
  this.timeout(120_000);

  it('has exactly one usage record for every request-id the clients got a 200 for', async () => {
    const db = await testDatabase();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = `tsxs_test_${randomBytes(16).toString('hex')}`;
    const env = { DATABASE_URL: db.url, PORT: String(port), GATEWAY_BOOTSTRAP_TOKEN: token };
    let child = startGateway(env);
    try {
      await waitReady(base, child);
      const created = await fetch(`${base}/api/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `kill9-${randomBytes(4).toString('hex')}`, dimension: '成本中心', model_scope: ['tsxt-fast'] }),
      });
      expect(created.status).to.equal(201);
      const key = (await created.json()) as { api_key: string; api_key_id: string };

      const answered: string[] = [];
      let failed = 0;
      let killed = false;
      const worker = async () => {
        while (!killed) {
          try {
            const response = await fetch(`${base}/v1/messages`, {
              method: 'POST',
              headers: { 'x-api-key': key.api_key, 'content-type': 'application/json' },
              body: JSON.stringify({ model: 'tsxt-fast', max_tokens: 64, messages: [{ role: 'user', content: 'count to three' }] }),
            });
            const body = await response.text();
            if (response.status === 200 && body.includes('"usage"')) answered.push(response.headers.get('request-id')!);
          } catch {
            failed += 1;
          }
        }
      };
      const workers = Array.from({ length: 16 }, worker);
      // Kill once a good number of calls have been answered, mid-flight.
      while (answered.length < 150) await new Promise((r) => setTimeout(r, 20));
      process.kill(-child.pid!, 'SIGKILL');
      killed = true;
      await Promise.all(workers);
      expect(answered.length).to.be.greaterThan(100);

      const rows = await db.pool.query<{ request_id: string; n: number }>(
        'select request_id, count(*)::int as n from usage_records where api_key_id = $1 group by request_id',
        [key.api_key_id],
      );
      const recorded = new Map(rows.rows.map((r) => [r.request_id, r.n]));
      const missing = answered.filter((id) => !recorded.has(id));
      expect(missing, 'answered calls without a usage record').to.deep.equal([]);
      expect([...recorded.values()].every((n) => n === 1), 'a request recorded twice').to.equal(true);
      process.stdout.write(`      answered ${answered.length} calls, ${failed} cut by the kill, ${recorded.size} records\n`);

      // It comes back by itself on the same database.
      child = startGateway(env);
      await waitReady(base, child);
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    }
  });
});
