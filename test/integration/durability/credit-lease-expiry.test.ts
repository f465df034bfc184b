// Issue 16: reservations of a crashed process expire. A gateway killed with
// -9 while calls are in flight leaves its credit lease behind; after
// GATEWAY_CREDIT_LEASE_TTL_MS it no longer counts against the limit, and
// every call it answered before the kill is settled, exactly once.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { builtinCatalog } from '../../../src/routing/catalog';
import { catalogJson, mockProvider } from '../../support/mock-catalog';
import { freePort, testDatabase } from '../../support/db';
import { createKeyWithToken, killGateway, startGateway, waitReady } from '../../support/gateway-process';

const TTL_MS = 1500;

describe('durability: credit reservations of a gateway killed with -9', function () {
  this.timeout(120_000);

  it('two gateway processes on one database, 200 calls at once split between them, against one limit: overshoot 0', async () => {
    const db = await testDatabase();
    const token = `tsxs_test_${randomBytes(16).toString('hex')}`;
    const ports = [await freePort(), await freePort()];
    const gateways: Awaited<ReturnType<typeof startGateway>>[] = [];
    try {
      // One after the other: the first makes the installation (bootstrap), the second joins it.
      for (const port of ports) {
        gateways.push(await startGateway({ DATABASE_URL: db.url, PORT: String(port), GATEWAY_BOOTSTRAP_TOKEN: token }));
        await waitReady(`http://127.0.0.1:${port}`, gateways.at(-1)!);
      }
      const base = `http://127.0.0.1:${ports[0]}`;
      const key = await createKeyWithToken(base, token, `two-${randomBytes(4).toString('hex')}`, ['tsxt-fast']);
      const { account_id: accountId } = (await db.pool.query('select account_id from api_keys where id = $1', [key.api_key_id])).rows[0];
      const month = (await db.pool.query(`select to_char(now() at time zone timezone, 'YYYY-MM') as m from accounts where id = $1`, [accountId])).rows[0].m;
      const used = async () =>
        BigInt((await db.pool.query('select coalesce(sum(amount_micros), 0)::bigint as n from account_month_usage where account_id = $1 and month = $2', [accountId, month])).rows[0].n);
      const before = await used();
      // A minimal useful call (below it the account is at its limit) and the cost of a few of these calls more.
      const limit = before + BigInt(builtinCatalog({}).minimalCallMicros) + 3_000n;
      await db.pool.query('update accounts set credit_limit_micros = $2 where id = $1', [accountId, String(limit)]);
      await db.pool.query(`select pg_notify('gateway_accounts', $1)`, [accountId]);
      await new Promise((r) => setTimeout(r, 300));
      const statuses = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const response = await fetch(`http://127.0.0.1:${ports[i % 2]}/v1/messages`, {
            method: 'POST',
            headers: { 'x-api-key': key.api_key, 'content-type': 'application/json' },
            // Worst cases of a few thousand micro-units: the headroom holds a handful of them at once.
            body: JSON.stringify({ model: 'tsxt-fast', max_tokens: 4096, messages: [{ role: 'user', content: 'Name three rivers in Europe.' }] }),
          });
          await response.arrayBuffer();
          return response.status;
        }),
      );
      const answered = statuses.filter((s) => s === 200).length;
      expect(statuses.filter((s) => s !== 200 && s !== 429)).to.deep.equal([]);
      expect(answered).to.be.greaterThan(0);
      expect(statuses.filter((s) => s === 429).length).to.be.greaterThan(0);
      const after = await used();
      expect(after <= limit, `settled ${after - before} past the room of ${limit - before}`).to.equal(true);
      const records = await db.pool.query('select count(*)::int as n from usage_records where api_key_id = $1', [key.api_key_id]);
      expect(records.rows[0].n).to.equal(answered);
      process.stdout.write(`      two processes: ${answered} answered, ${200 - answered} refused, settled ${after - before} of ${limit - before} micro-units\n`);
    } finally {
      for (const gateway of gateways) killGateway(gateway);
    }
  });

  it(`expire within the lease TTL (${TTL_MS} ms here), and no settled usage is lost`, async () => {
    const db = await testDatabase();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = `tsxs_test_${randomBytes(16).toString('hex')}`;
    const catalogPath = path.join(tmpdir(), `credit-lease-${randomBytes(4).toString('hex')}.json`);
    await writeFile(
      catalogPath,
      JSON.stringify(
        catalogJson(
          { quick: mockProvider(), slow: mockProvider({ latency_ms: 60_000 }) },
          { 'tsxt-quick': [{ provider: 'quick', model: 'quick-1' }], 'tsxt-slow': [{ provider: 'slow', model: 'slow-1' }] },
        ),
      ),
    );
    const env = { DATABASE_URL: db.url, PORT: String(port), GATEWAY_BOOTSTRAP_TOKEN: token, GATEWAY_CATALOG: catalogPath, GATEWAY_CREDIT_LEASE_TTL_MS: String(TTL_MS) };
    let gateway = await startGateway(env);
    try {
      await waitReady(base, gateway);
      const key = await createKeyWithToken(base, token, `lease-${randomBytes(4).toString('hex')}`, ['tsxt-quick', 'tsxt-slow']);
      const { account_id: accountId } = (await db.pool.query('select account_id from api_keys where id = $1', [key.api_key_id])).rows[0];
      const monthUsage = async () => BigInt((await db.pool.query('select coalesce(sum(amount_micros), 0)::bigint as n from account_month_usage where account_id = $1', [accountId])).rows[0].n);
      // The bootstrap account is shared with other tests on this database: count from here.
      const usageBefore = await monthUsage();
      // A limit far above these calls: the process holds a slice of headroom beside its calls in flight.
      await db.pool.query('update accounts set credit_limit_micros = 5000000 where id = $1', [accountId]);
      await db.pool.query(`select pg_notify('gateway_accounts', $1)`, [accountId]);
      const call = (model: string) =>
        fetch(`${base}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': key.api_key, 'content-type': 'application/json' },
          body: JSON.stringify({ model, max_tokens: 512, messages: [{ role: 'user', content: 'count to three' }] }),
        });
      const answered: string[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await call('tsxt-quick');
        expect(response.status).to.equal(200);
        answered.push(response.headers.get('request-id')!);
      }
      const inFlight = Array.from({ length: 5 }, () => call('tsxt-slow').catch(() => null));
      const reserved = async () =>
        Number((await db.pool.query('select coalesce(sum(amount_micros), 0) as n from credit_leases where account_id = $1 and expires_at > now()', [accountId])).rows[0].n);
      const deadline = Date.now() + 10_000;
      while ((await reserved()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const held = await reserved();
      expect(held, 'reserved while calls are in flight').to.be.greaterThan(0);

      killGateway(gateway);
      const killedAt = Date.now();
      await gateway.exited;
      await Promise.all(inFlight);
      while ((await reserved()) > 0) {
        expect(Date.now() - killedAt, 'a dead process still holds credit').to.be.below(TTL_MS + 1000);
        await new Promise((r) => setTimeout(r, 25));
      }
      const freedAfter = Date.now() - killedAt;

      const rows = await db.pool.query<{ request_id: string; amount_micros: string }>('select request_id, amount_micros from usage_records where api_key_id = $1', [key.api_key_id]);
      const recorded = new Set(rows.rows.map((r) => r.request_id));
      expect(answered.filter((id) => !recorded.has(id)), 'answered calls without a usage record').to.deep.equal([]);
      expect((await monthUsage()) - usageBefore).to.equal(rows.rows.reduce((sum, r) => sum + BigInt(r.amount_micros), 0n));
      process.stdout.write(`      ${held} micro-units held at the kill; no longer counted after ${freedAfter} ms (TTL ${TTL_MS} ms)\n`);

      // A new process starts with nothing reserved and answers.
      gateway = await startGateway(env);
      await waitReady(base, gateway);
      const status = await fetch(`${base}/api/v1/account/credit`, { headers: { authorization: `Bearer ${token}` } });
      expect(((await status.json()) as { reserved: string }).reserved).to.equal('0');
      expect((await call('tsxt-quick')).status).to.equal(200);
    } finally {
      killGateway(gateway);
    }
  });
});
