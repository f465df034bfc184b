// docs/architecture.md §7: a month closes after it ends (operator CLI `settlement close
// --account ID --month YYYY-MM`); a closed statement never changes — not when
// late usage rows land in that month, not when a key is renamed or cancelled.
import { expect } from 'chai';
import { zoneMonth } from '../../../src/domain/zone-time';
import { AppError } from '../../../src/errors';
import { runAdmin } from '../../support/admin-cli';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { dataOf, gql } from '../graphql/graphql-client';
import { micros, pool, USAGE_RECORD_COLUMNS, usageInput } from './billing-support';

const TZ = 'Asia/Shanghai';
const MONTH = '2026-10';
const SETTLEMENT_GQL = `query($month: String!) { settlement(month: $month) { month status closedAt totalTokens totalAmount keys { apiKeyId name totalAmount } } }`;

describe('billing: closing a settlement month (operator CLI)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let owner: TestAccount;
  let databaseUrl: string;
  let keyA: string;
  let keyB: string;
  let keyC: string;
  let open: any;
  let closed: any;

  const admin = (...args: string[]) => runAdmin(databaseUrl, ...args);

  const statement = async (month = MONTH) => {
    const response = await api(t, 'GET', `/api/v1/settlements/${month}`, owner.token);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  };

  before(async () => {
    t = await startTestApp();
    databaseUrl = (await testDatabase()).url;
    owner = await createAccount(t, { timezone: TZ });
    keyA = (await createKey(t, owner.token)).api_key_id;
    keyB = (await createKey(t, owner.token)).api_key_id;
    keyC = (await createKey(t, owner.token, { dimension: '成本中心' })).api_key_id;
    const at = (iso: string) => new Date(iso);
    const seed = (apiKeyId: string, when: string, miss: number, output: number, thinking = false) =>
      t.app.services.recorder.record(usageInput(t, { accountId: owner.accountId, timezone: TZ, apiKeyId, at: at(when), miss, output, hit: 40, thinking }));
    await Promise.all([
      seed(keyA, '2026-10-03T02:00:00Z', 1200, 300),
      seed(keyA, '2026-10-31T15:59:59Z', 800, 90, true), // the last second of October in Shanghai
      seed(keyB, '2026-10-12T09:30:00Z', 5000, 1000),
      seed(keyC, '2026-10-01T00:00:00Z', 70, 7, true), // 08:00 on Oct 1 in Shanghai
      seed(keyC, '2026-10-31T16:00:00Z', 999, 99), // November in Shanghai: not on October's statement
    ]);
    open = await statement();
  });
  after(async () => t.close());

  it('before closing, the finished month reads open', () => {
    expect(open).to.include({ month: MONTH, status: 'open', closed_at: null, currency: 'CNY' });
    expect(open.keys.map((k: any) => k.api_key_id).sort()).to.deep.equal([keyA, keyB, keyC].sort());
    const sum = open.keys.reduce((n: bigint, k: any) => n + micros(k.total_amount), 0n);
    expect(sum).to.equal(micros(open.total_amount));
  });

  it('`settlement close` freezes it: status closed, the same lines', async () => {
    const run = await admin('settlement', 'close', '--account', owner.accountId, '--month', MONTH);
    expect(run.code, run.stderr).to.equal(0);
    const printed = JSON.parse(run.stdout);
    expect(printed.status).to.equal('closed');
    closed = await statement();
    expect(closed.status).to.equal('closed');
    expect(closed.closed_at).to.be.a('string');
    expect(closed.closed_at).to.equal(printed.closed_at);
    const { status: _s1, closed_at: _c1, ...openRest } = open;
    const { status: _s2, closed_at: _c2, ...closedRest } = closed;
    expect(closedRest).to.deep.equal(openRest);
  });

  it('never changes afterwards: late rows in that month, a renamed and a cancelled key', async () => {
    const db = await pool();
    // A late row written straight into October...
    await db.query(
      `insert into usage_records (${USAGE_RECORD_COLUMNS})
       values ('use_late_' || $3, 'req_late_' || $3, $1, $2, 'messages', 'tsxt-general', 'sim-medium', 'sim', 'standard', 0.5, '[]', false, false,
         'ok', null, 'no_thinking', 0, 1000, 100, 0, 1000, 100, 0, 2000, 800, 1100, 2800, '{}', 10, 5, '2026-10-20T04:00:00Z')`,
      [owner.accountId, keyA, Date.now().toString(36)],
    );
    // ...one through the recorder...
    await t.app.services.recorder.record(usageInput(t, { accountId: owner.accountId, timezone: TZ, apiKeyId: keyB, at: new Date('2026-10-25T00:00:00Z'), miss: 10, output: 10 }));
    // ...a renamed key and a cancelled one.
    const renamed = await api(t, 'PUT', `/api/v1/keys/${keyC}`, owner.token, { name: `renamed-${Date.now()}`, dimension: '业务线' });
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    expect((await api(t, 'DELETE', `/api/v1/keys/${keyB}`, owner.token)).status).to.equal(200);

    // The changes are real: the live views of October moved...
    const usage = await api(t, 'GET', `/api/v1/keys/${keyA}/usage?start=2026-10-01&end=2026-10-31`, owner.token);
    expect(usage.body.calls).to.equal(3);
    // ...but the statement did not, byte for byte.
    const again = await api(t, 'GET', `/api/v1/settlements/${MONTH}`, owner.token);
    expect(again.body).to.deep.equal(closed);
    expect(JSON.stringify(again.body)).to.equal(JSON.stringify(closed));

    const viaGraphql = dataOf(await gql(t, SETTLEMENT_GQL, { month: MONTH }, owner.token)).settlement;
    expect(viaGraphql).to.include({ month: MONTH, status: 'closed', closedAt: closed.closed_at, totalTokens: closed.total_tokens, totalAmount: closed.total_amount });
    expect(viaGraphql.keys.find((k: any) => k.apiKeyId === keyC).name).to.equal(closed.keys.find((k: any) => k.api_key_id === keyC).name);
  });

  it('closing twice → 409 already_closed; the statement stays as first closed', async () => {
    const run = await admin('settlement', 'close', '--account', owner.accountId, '--month', MONTH);
    expect(run.code).to.equal(1);
    expect(JSON.parse(run.stderr).error.code).to.equal('already_closed');
    const error = await t.app.services.usage.closeSettlement(owner.accountId, MONTH).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(AppError);
    expect(error).to.include({ status: 409, code: 'already_closed' });
    expect(await statement()).to.deep.equal(closed);
  });

  it('closing the current (or a future) month → 409 month_not_over', async () => {
    const current = zoneMonth(TZ);
    const run = await admin('settlement', 'close', '--account', owner.accountId, '--month', current);
    expect(run.code).to.equal(1);
    expect(JSON.parse(run.stderr).error.code).to.equal('month_not_over');
    for (const month of [current, '2099-01']) {
      const error = await t.app.services.usage.closeSettlement(owner.accountId, month).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AppError);
      expect(error).to.include({ status: 409, code: 'month_not_over' });
    }
    expect((await statement(current)).status).to.equal('open');
  });

  it('closing a month within a minute of its end in the account zone → 409 month_not_over (late group commits)', async () => {
    const fresh = await createAccount(t, { timezone: TZ });
    // 2026-09 ends at 2026-09-30T16:00:00Z in Asia/Shanghai.
    for (const at of ['2026-09-30T15:59:59Z', '2026-09-30T16:00:30Z']) {
      const error = await t.app.services.usage.closeSettlement(fresh.accountId, '2026-09', new Date(at)).catch((e: unknown) => e);
      expect(error, at).to.be.instanceOf(AppError);
      expect(error, at).to.include({ status: 409, code: 'month_not_over' });
    }
    const frozen = await t.app.services.usage.closeSettlement(fresh.accountId, '2026-09', new Date('2026-09-30T16:01:01Z'));
    expect(frozen.status).to.equal('closed');
  });
});
