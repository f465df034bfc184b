// Every answered call is billed exactly once, even when the gateway process
// is killed with SIGKILL under load: the usage record is committed before the
// reply completes (group commit), so a 200 the client saw implies a record.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { freePort, testDatabase } from '../../support/db';
import { createKeyWithToken, killGateway, startGateway, waitReady } from '../../support/gateway-process';

describe('durability: kill -9 under load', function () {
  this.timeout(120_000);

  // GATEWAY_USAGE_SYNC_COMMIT=off gives up only PostgreSQL-crash durability: a killed gateway still loses nothing.
  for (const syncCommit of ['on', 'off']) it(`has exactly one usage record for every request-id the clients got a 200 for (GATEWAY_USAGE_SYNC_COMMIT=${syncCommit})`, async () => {
    const db = await testDatabase();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = `tsxs_test_${randomBytes(16).toString('hex')}`;
    const env = { DATABASE_URL: db.url, PORT: String(port), GATEWAY_BOOTSTRAP_TOKEN: token, GATEWAY_USAGE_SYNC_COMMIT: syncCommit };
    let gateway = await startGateway(env);
    try {
      await waitReady(base, gateway);
      const key = await createKeyWithToken(base, token, `kill9-${randomBytes(4).toString('hex')}`, ['tsxt-fast']);

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
      killGateway(gateway);
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
      gateway = await startGateway(env);
      await waitReady(base, gateway);
    } finally {
      killGateway(gateway);
    }
  });
});
