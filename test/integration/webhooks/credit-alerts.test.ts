// Issue 31: credit alerts. Thresholds per account (default 80 and 100 % of
// the monthly limit) are validated and audited; a threshold reached by
// settled usage enters the webhook outbox exactly once per month, even with
// two gateway processes settling the account's calls at once; reaching the
// limit and being restored (limit raised) are events too.
import { expect } from 'chai';
import pino from 'pino';
import { zoneMonth } from '../../../src/domain/zone-time';
import { WebhookDispatcher } from '../../../src/domain/webhooks/webhook-dispatcher';
import { WebhookTargetGuard } from '../../../src/domain/webhooks/webhook-target';
import { addUser, api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { dataCall, operator, type CallSpec } from '../billing/billing-support';

const PROMPT: CallSpec = { form: 'messages', stream: false, thinking: false, turns: ['Name three rivers in Europe, briefly.'] };
const IDLE = { GATEWAY_WEBHOOK_POLL_MS: '60000', GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1' };

describe('credit alerts: thresholds and credit events', function () {
  this.timeout(120_000);
  let t: TestApp;
  /** A second gateway on the same database, as another process. */
  let t2: TestApp;

  before(async () => {
    t = await startTestApp({ env: IDLE });
    t2 = await startTestApp({ env: IDLE });
  });
  after(async () => {
    await t2?.close();
    await t?.close();
  });

  const events = async (accountId: string, type: string) =>
    (await (await testDatabase()).pool.query<{ id: string; data: Record<string, any> }>('select id, data from webhook_events where account_id = $1 and type = $2 order by created_at', [accountId, type])).rows;

  const sweep = async () => {
    const d = new WebhookDispatcher({
      pool: (await testDatabase()).pool,
      targets: new WebhookTargetGuard({ allowPrivate: true }),
      logger: pino({ level: 'silent' }),
      pollMs: 60_000,
      minimalCallMicros: t.app.services.catalog.minimalCallMicros,
    });
    await d.sweep();
    await d.close();
  };

  it('reads the default thresholds, validates a change (400 naming thresholds), lets viewers read but not change, and audits it', async () => {
    const owner = await createAccount(t);
    const read = await api(t, 'GET', '/api/v1/account/credit-alerts', owner.token);
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.equal({ thresholds: [80, 100], month: zoneMonth('UTC'), reached_threshold: null });
    for (const thresholds of [[100, 80], [80, 80], [0, 50], [50, 101], [1, 2, 3, 4, 5, 6], [], ['80'], [80.5], 'all']) {
      const response = await api(t, 'PUT', '/api/v1/account/credit-alerts', owner.token, { thresholds });
      expect(response.status, JSON.stringify(thresholds)).to.equal(400);
      expect(response.body.error.field).to.equal('thresholds');
    }
    const set = await api(t, 'PUT', '/api/v1/account/credit-alerts', owner.token, { thresholds: [50, 90, 100] });
    expect(set.status).to.equal(200);
    expect(set.body.thresholds).to.deep.equal([50, 90, 100]);
    const viewer = await addUser(t, owner.accountId, 'viewer');
    expect((await api(t, 'GET', '/api/v1/account/credit-alerts', viewer.token)).body.thresholds).to.deep.equal([50, 90, 100]);
    expect((await api(t, 'PUT', '/api/v1/account/credit-alerts', viewer.token, { thresholds: [80] })).status).to.equal(403);
    const audit = await api(t, 'GET', '/api/v1/audit-events', owner.token);
    expect(audit.body.items[0]).to.deep.include({ action: 'account.credit_alerts_set', changes: { thresholds: { from: [80, 100], to: [50, 90, 100] } } });
  });

  it('two gateways settling one account at once: each threshold reached is one event (and one delivery per endpoint), the limit one more; a sweep adds none; raising the limit restores once', async () => {
    const limit = t.app.services.catalog.minimalCallMicros + 40_000;
    const owner = await createAccount(t, { timezone: 'UTC', creditLimitMicros: limit });
    const thresholds = [10, 20, 30, 40, 50];
    expect((await api(t, 'PUT', '/api/v1/account/credit-alerts', owner.token, { thresholds })).status).to.equal(200);
    const hook = await api(t, 'POST', '/api/v1/account/webhooks', owner.token, { url: 'http://127.0.0.1:9/never', events: ['credit.threshold_reached', 'credit.limit_reached', 'credit.restored'] });
    expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
    const keys = [(await createKey(t, owner.token)).api_key, (await createKey(t, owner.token)).api_key];
    // Waves of concurrent calls on both gateways until the account is at its limit (admission refuses what does not fit).
    const db = await testDatabase();
    const month = zoneMonth('UTC');
    const usedNow = async () =>
      Number((await db.pool.query<{ amount_micros: string }>('select amount_micros from account_month_usage where account_id = $1 and month = $2', [owner.accountId, month])).rows[0]?.amount_micros ?? 0);
    let answered = 0;
    for (let wave = 0; wave < 10 && limit - (await usedNow()) >= t.app.services.catalog.minimalCallMicros; wave++) {
      const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => dataCall([t, t2][i % 2]!, keys[i % 2]!, PROMPT)));
      answered += outcomes.filter((o) => o.status === 200).length;
    }
    expect(answered).to.be.greaterThan(5);
    const used = await usedNow();
    const reached = thresholds.filter((pct) => used * 100 >= limit * pct);
    expect(reached.length, `used ${used} of ${limit}`).to.be.greaterThan(0);
    const check = async () => {
      const crossed = await events(owner.accountId, 'credit.threshold_reached');
      expect(crossed.map((e) => e.data.threshold).sort((a, b) => a - b)).to.deep.equal(reached);
      for (const e of crossed) expect(e.data).to.include({ account_id: owner.accountId, month, limit_micros: limit });
      const atLimit = limit - used < t.app.services.catalog.minimalCallMicros;
      expect((await events(owner.accountId, 'credit.limit_reached')).length).to.equal(atLimit ? 1 : 0);
      const fanned = await db.pool.query<{ n: number }>('select count(*)::int as n from webhook_deliveries where webhook_id = $1', [hook.body.webhook_id]);
      expect(fanned.rows[0]!.n).to.equal(crossed.length + (atLimit ? 1 : 0));
      return atLimit;
    };
    const atLimit = await check();
    await sweep();
    await check();
    process.stdout.write(`      settled ${used} of ${limit} micro-units on two gateways: thresholds ${reached.join(', ')} % reached once each${atLimit ? ', limit reached once' : ''}\n`);

    const banner = await api(t, 'GET', '/api/v1/account/credit-alerts', owner.token);
    expect(banner.body.reached_threshold).to.equal(reached.at(-1));

    if (atLimit) {
      await t.app.services.accounts.setCreditLimit(operator(owner.accountId), limit * 10);
      await sweep();
      await sweep();
      const restored = await events(owner.accountId, 'credit.restored');
      expect(restored).to.have.length(1);
      expect(restored[0]!.data).to.include({ reason: 'limit_raised', reached_month: month, limit_micros: limit * 10 });
    }
  });
  it('key.expiring: a sweep writes it once for a key within 7 days of its last valid day, not for one further out', async () => {
    const owner = await createAccount(t, { timezone: 'UTC' });
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const soon = await createKey(t, owner.token, { expires_at: day(3) });
    await createKey(t, owner.token, { expires_at: day(30) });
    await sweep();
    await sweep();
    const expiring = await events(owner.accountId, 'key.expiring');
    expect(expiring.map((e) => e.data)).to.deep.equal([{ api_key_id: soon.api_key_id, name: soon.name, expires_at: day(3) }]);
  });
});
