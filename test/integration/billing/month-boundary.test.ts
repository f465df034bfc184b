// docs/architecture.md §7: months and days of usage, settlement and the credit ledger are
// the account's, not UTC's. 2026-10-31T16:00:00Z is 2026-11-01 00:00 in
// Asia/Shanghai: one second earlier is still October there.
import { expect } from 'chai';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { micros, pool, usageInput } from './billing-support';

const LAST_OCTOBER_SECOND = new Date('2026-10-31T15:59:59Z');
const LAST_OCTOBER_MILLI = new Date('2026-10-31T15:59:59.999Z');
const SHANGHAI_MIDNIGHT = new Date('2026-10-31T16:00:00Z');

interface Seeded {
  owner: TestAccount;
  keyId: string;
  /** Amounts (micro-units) and tokens of the two sides of the Shanghai midnight. */
  before: { micros: bigint; tokens: number; requestIds: string[] };
  after: { micros: bigint; tokens: number; requestIds: string[] };
}

describe('billing month boundary in the account time zone', function () {
  this.timeout(60_000);
  let t: TestApp;
  let shanghai: Seeded;
  let utc: Seeded;

  async function seed(timezone: string): Promise<Seeded> {
    const owner = await createAccount(t, { timezone });
    const keyId = (await createKey(t, owner.token)).api_key_id as string;
    const make = (at: Date, miss: number, output: number, thinking = false) =>
      usageInput(t, { accountId: owner.accountId, timezone, apiKeyId: keyId, at, miss, output, hit: 100, thinking });
    const beforeInputs = [make(LAST_OCTOBER_SECOND, 1000, 200), make(LAST_OCTOBER_MILLI, 10, 20, true)];
    const afterInputs = [make(SHANGHAI_MIDNIGHT, 3000, 700)];
    // Through the real recorder: the same group-commit transaction writes the records and the ledger.
    await Promise.all([...beforeInputs, ...afterInputs].map((input) => t.app.services.recorder.record(input)));
    const side = (inputs: typeof beforeInputs) => ({
      micros: inputs.reduce((sum, i) => sum + BigInt(i.amounts.totalMicros), 0n),
      tokens: inputs.reduce((sum, i) => sum + i.amounts.totalTokens, 0),
      requestIds: inputs.map((i) => i.requestId),
    });
    return { owner, keyId, before: side(beforeInputs), after: side(afterInputs) };
  }

  before(async () => {
    t = await startTestApp();
    shanghai = await seed('Asia/Shanghai');
    utc = await seed('UTC');
  });
  after(async () => t.close());

  async function settlement(account: Seeded, month: string) {
    const response = await api(t, 'GET', `/api/v1/settlements/${month}`, account.owner.token);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  async function keyUsage(account: Seeded, start: string, end: string) {
    const response = await api(t, 'GET', `/api/v1/keys/${account.keyId}/usage?start=${start}&end=${end}`, account.owner.token);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  it('the October and November settlements split at the Shanghai midnight', async () => {
    const october = await settlement(shanghai, '2026-10');
    expect(october.keys).to.have.length(1);
    expect(october.keys[0].api_key_id).to.equal(shanghai.keyId);
    expect(micros(october.total_amount)).to.equal(shanghai.before.micros);
    expect(october.total_tokens).to.equal(shanghai.before.tokens);

    const november = await settlement(shanghai, '2026-11');
    expect(micros(november.total_amount)).to.equal(shanghai.after.micros);
    expect(november.total_tokens).to.equal(shanghai.after.tokens);
  });

  it('the same instants in a UTC account both fall in October', async () => {
    const october = await settlement(utc, '2026-10');
    expect(micros(october.total_amount)).to.equal(utc.before.micros + utc.after.micros);
    const november = await settlement(utc, '2026-11');
    expect(november.keys).to.deep.equal([]);
    expect(november.total_amount).to.equal('0');
  });

  it('per-key usage date ranges are Shanghai days', async () => {
    const october = await keyUsage(shanghai, '2026-10-01', '2026-10-31');
    expect(october.calls).to.equal(2);
    expect(micros(october.total_amount)).to.equal(shanghai.before.micros);

    const lastDay = await keyUsage(shanghai, '2026-10-31', '2026-10-31');
    expect(lastDay.calls).to.equal(2);
    expect(micros(lastDay.total_amount)).to.equal(shanghai.before.micros);

    const firstDay = await keyUsage(shanghai, '2026-11-01', '2026-11-01');
    expect(firstDay.calls).to.equal(1);
    expect(micros(firstDay.total_amount)).to.equal(shanghai.after.micros);
    expect(firstDay.total_tokens).to.equal(shanghai.after.tokens);

    const both = await keyUsage(shanghai, '2026-10-31', '2026-11-01');
    expect(both.calls).to.equal(3);

    // In UTC, 2026-11-01 has nothing and 2026-10-31 has all three.
    expect((await keyUsage(utc, '2026-11-01', '2026-11-01')).calls).to.equal(0);
    expect((await keyUsage(utc, '2026-10-31', '2026-10-31')).calls).to.equal(3);
  });

  it('the usage detail and its CSV export use the same Shanghai days', async () => {
    const detail = await api(t, 'GET', '/api/v1/usage?start=2026-11-01&end=2026-11-01', shanghai.owner.token);
    expect(detail.body.total).to.equal(1);
    expect(detail.body.items[0].request_id).to.equal(shanghai.after.requestIds[0]);
    expect(detail.body.items[0].created_at).to.equal(SHANGHAI_MIDNIGHT.toISOString());

    const csv = await fetch(`${t.baseUrl}/api/v1/usage/export?start=2026-10-31&end=2026-10-31`, {
      headers: { authorization: `Bearer ${shanghai.owner.token}` },
    });
    const rows = (await csv.text()).trim().split('\n').slice(1);
    expect(rows.map((row) => row.split(',')[0]).sort()).to.deep.equal([...shanghai.before.requestIds].sort());
  });

  it('the month-to-date credit ledger (account_month_usage) is kept per account month', async () => {
    const db = await pool();
    const ledger = async (accountId: string) =>
      Object.fromEntries(
        (await db.query<{ month: string; amount_micros: number }>('select month, amount_micros from account_month_usage where account_id = $1 order by month', [accountId])).rows.map(
          (r) => [r.month, BigInt(r.amount_micros)],
        ),
      );
    expect(await ledger(shanghai.owner.accountId)).to.deep.equal({ '2026-10': shanghai.before.micros, '2026-11': shanghai.after.micros });
    expect(await ledger(utc.owner.accountId)).to.deep.equal({ '2026-10': utc.before.micros + utc.after.micros });

    // What the credit monitor reads as month-to-date on either side of the Shanghai midnight.
    const { credit, accounts } = t.app.services;
    const account = await accounts.get(shanghai.owner.accountId);
    expect(await credit.monthToDate(account, LAST_OCTOBER_SECOND)).to.deep.equal({ month: '2026-10', amountMicros: Number(shanghai.before.micros) });
    expect(await credit.monthToDate(account, SHANGHAI_MIDNIGHT)).to.deep.equal({ month: '2026-11', amountMicros: Number(shanghai.after.micros) });
    credit.forget(account.id);
  });

  it('last_used_at reads in the account zone', async () => {
    const key = await api(t, 'GET', `/api/v1/keys/${shanghai.keyId}`, shanghai.owner.token);
    expect(key.body.last_used_at).to.equal('2026-11-01 00:00:00');
    const utcKey = await api(t, 'GET', `/api/v1/keys/${utc.keyId}`, utc.owner.token);
    expect(utcKey.body.last_used_at).to.equal('2026-10-31 16:00:00');
  });
});
