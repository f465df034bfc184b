// Spec §3/§7/§8, DESIGN §5/§9: one aggregate credit limit per account on the
// month-to-date amount. A call is admitted only when its worst case fits what
// is neither used nor reserved (429 otherwise); month-to-date reaching the
// limit (the operator lowering it, say) suspends every key of the account
// (429, x-should-retry: false, so official clients do not retry) until the
// limit is raised or the month turns — on every gateway process — while keys
// the owner suspended stay suspended.
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { formatMicros } from '../../../src/metering/decimal';
import { zoneMonth } from '../../../src/domain/zone-time';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { dataOf, gql } from '../graphql/graphql-client';
import { allUsageItems, dataCall, eventually, micros, operator, pool, shiftDay, zoneDay, type CallSpec } from './billing-support';

const PROMPT: CallSpec = { form: 'messages', stream: false, thinking: false, turns: ['What is the capital of France? Answer briefly.'] };
const VARIANTS: CallSpec[] = [
  PROMPT,
  { ...PROMPT, form: 'chat' },
  { ...PROMPT, stream: true },
  { ...PROMPT, form: 'chat', stream: true },
];

const KEYS_GQL = `query { apiKeys(pageSize: 100) { total items { id status suspendedReason } } }`;
const KEY_GQL = `query($id: ID!) { apiKey(id: $id) { id status suspendedReason } }`;
const CREDIT_GQL = `query { creditStatus { creditLimit currency month monthUsed reserved remaining suspended overflow } }`;

interface Key {
  id: string;
  secret: string;
}

/** GET /v1/models with a key: authenticated like every data-plane call, but free. */
async function probe(t: TestApp, key: Key): Promise<Response> {
  return fetch(`${t.baseUrl}/v1/models`, { headers: { 'x-api-key': key.secret, 'anthropic-version': '2023-06-01' } });
}

async function expectCreditRefusal(t: TestApp, key: Key, spec: CallSpec): Promise<void> {
  const result = await dataCall(t, key.secret, spec);
  const what = `${spec.form}${spec.stream ? ' stream' : ''}`;
  expect(result.status, `${what}: ${JSON.stringify(result.body)}`).to.equal(429);
  expect(result.headers.get('x-should-retry'), what).to.equal('false');
  expect(result.headers.get('content-type'), what).to.match(/^application\/json/);
  if (spec.form === 'messages') {
    expect(result.body.type).to.equal('error');
    expect(result.body.error.type).to.equal('rate_limit_error');
  } else {
    expect(result.body.error).to.include({ type: 'rate_limit_error', code: 'credit_limit_reached' });
  }
}

describe('billing: the account credit limit', function () {
  this.timeout(60_000);
  let t: TestApp;
  /** A second gateway process on the same database. */
  let t2: TestApp;
  let owner: TestAccount;
  let bystander: TestAccount;
  let k1: Key;
  let k2: Key;
  /** Suspended by the owner before the limit is reached. */
  let k3: Key;
  let other: Key;
  /** The amount (micro-units) of one PROMPT call. */
  let cost: number;
  /** The most any of the VARIANTS reserves (its worst case). */
  let worst: number;
  let limit: number;

  const keyOf = (created: any): Key => ({ id: created.api_key_id, secret: created.api_key });
  const monthUsed = async (account: TestAccount) => micros((await api(t, 'GET', '/api/v1/account/credit', account.token)).body.month_used);

  before(async () => {
    t = await startTestApp();
    t2 = await startTestApp();
    // What one call costs, measured on an unlimited account with the same request.
    const meter = await createAccount(t, { timezone: 'UTC' });
    const meterKey = keyOf(await createKey(t, meter.token));
    expect((await dataCall(t, meterKey.secret, PROMPT)).status).to.equal(200);
    cost = Number(await monthUsed(meter));
    expect(cost).to.be.greaterThan(0);
    // What each variant reserves, from the refusal of an account with 1 micro-unit of credit.
    const tiny = await createAccount(t, { timezone: 'UTC', creditLimitMicros: 1 });
    const tinyKey = keyOf(await createKey(t, tiny.token));
    worst = 0;
    for (const spec of VARIANTS) {
      const refused = await dataCall(t, tinyKey.secret, spec);
      expect(refused.status).to.equal(429);
      const figure = /worst case \(([\d.]+) CNY/.exec(refused.body.error.message)?.[1];
      worst = Math.max(worst, Number(micros(figure!)));
    }
    expect(worst).to.be.greaterThan(cost);
    // Room for three calls' costs and a fourth call's worst case.
    limit = 3 * cost + worst;

    owner = await createAccount(t, { timezone: 'Asia/Shanghai', creditLimitMicros: limit });
    bystander = await createAccount(t, { timezone: 'Asia/Shanghai', creditLimitMicros: limit });
    k1 = keyOf(await createKey(t, owner.token));
    k2 = keyOf(await createKey(t, owner.token));
    k3 = keyOf(await createKey(t, owner.token));
    other = keyOf(await createKey(t, bystander.token));
    expect((await api(t, 'POST', `/api/v1/keys/${k3.id}/suspend`, owner.token)).body).to.include({ status: 'suspended', suspended_reason: 'owner' });
  });

  after(async () => {
    await t2.close();
    await t.close();
  });

  it('calls on any key are admitted while their worst case fits what is left; the next is 429 with month-to-date below the limit', async () => {
    for (let i = 0; i < 4; i++) {
      const key = i % 2 === 0 ? k1 : k2;
      const result = await dataCall(t, key.secret, VARIANTS[i % VARIANTS.length]!);
      expect(result.status, `call ${i}: ${JSON.stringify(result.body)}`).to.equal(200);
    }
    expect(await monthUsed(owner)).to.equal(BigInt(4 * cost));
    // What is left (worst − cost) no longer covers a worst case.
    await expectCreditRefusal(t, k1, PROMPT);
    expect(await monthUsed(owner)).to.equal(BigInt(4 * cost));
    // The keys stay usable for calls that fit: the account is not over its limit.
    expect((await probe(t, k1)).status).to.equal(200);
    expect((await api(t, 'GET', `/api/v1/keys/${k1.id}`, owner.token)).body).to.include({ status: 'active' });
    const status = (await api(t, 'GET', '/api/v1/account/credit', owner.token)).body;
    expect(status).to.include({ suspended: false, reserved: '0', remaining: formatMicros(limit - 4 * cost) });

    // The operator lowers the limit to what was used: reached.
    limit = 4 * cost;
    await t.app.services.accounts.setCreditLimit(operator(owner.accountId), limit);
    for (const app of [t, t2]) await eventually(async () => expect((await probe(app, k1)).status).to.equal(429), 2000, 2);
  });

  it('then EVERY key answers 429 rate_limit_error with x-should-retry: false, both forms, plain and streamed, on both processes', async () => {
    const db = await pool();
    const records = async () => (await db.query('select count(*)::int as n from usage_records where account_id = $1', [owner.accountId])).rows[0].n as number;
    const before = await records();
    for (const app of [t, t2]) {
      for (const key of [k1, k2]) {
        for (const spec of VARIANTS) await expectCreditRefusal(app, key, spec);
        const models = await probe(app, key);
        expect(models.status).to.equal(429);
      }
      // The owner's suspension still wins for its key.
      const suspended = await dataCall(app, k3.secret, PROMPT);
      expect(suspended.status).to.equal(403);
      expect(suspended.body.error.type).to.equal('permission_error');
    }
    // Refused calls cost nothing and add nothing.
    expect(await records()).to.equal(before);
    expect(await monthUsed(owner)).to.equal(BigInt(4 * cost));
  });

  it('the official clients do not retry: exactly one request reaches the gateway', async () => {
    let sent = 0;
    const counting: typeof fetch = (input, init) => {
      sent++;
      return fetch(input, init);
    };
    const anthropic = new Anthropic({ apiKey: k1.secret, baseURL: t.baseUrl, maxRetries: 2, fetch: counting });
    const started = Date.now();
    let error: unknown;
    try {
      await anthropic.messages.create({ model: 'tsxt-general', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(Anthropic.RateLimitError);
    expect((error as InstanceType<typeof Anthropic.RateLimitError>).status).to.equal(429);
    expect(sent, 'requests the Anthropic client sent').to.equal(1);

    sent = 0;
    const openai = new OpenAI({ apiKey: k2.secret, baseURL: `${t.baseUrl}/v1`, maxRetries: 2, fetch: counting });
    error = undefined;
    try {
      await openai.chat.completions.create({ model: 'tsxt-general', messages: [{ role: 'user', content: 'hello' }] });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(OpenAI.RateLimitError);
    expect(sent, 'requests the OpenAI client sent').to.equal(1);
    // A retry would have waited at least ~0.5 s of back-off.
    expect(Date.now() - started).to.be.lessThan(1000);
  });

  it('keys read suspended / credit_limit in REST list and get and GraphQL apiKeys; the owner-suspended key reads owner', async () => {
    const list = await api(t, 'GET', '/api/v1/keys?page_size=100', owner.token);
    const byId = new Map(list.body.items.map((k: any) => [k.api_key_id, k]));
    for (const key of [k1, k2]) expect(byId.get(key.id)).to.include({ status: 'suspended', suspended_reason: 'credit_limit' });
    expect(byId.get(k3.id)).to.include({ status: 'suspended', suspended_reason: 'owner' });
    expect((await api(t, 'GET', `/api/v1/keys/${k1.id}`, owner.token)).body).to.include({ status: 'suspended', suspended_reason: 'credit_limit' });
    // The status filter follows the derived state.
    expect((await api(t, 'GET', '/api/v1/keys?status=active', owner.token)).body.total).to.equal(0);
    expect((await api(t, 'GET', '/api/v1/keys?status=suspended', owner.token)).body.total).to.equal(3);

    for (const app of [t, t2]) {
      const keys = dataOf(await gql(app, KEYS_GQL, {}, owner.token)).apiKeys.items;
      const gqlById = new Map(keys.map((k: any) => [k.id, k]));
      for (const key of [k1, k2]) expect(gqlById.get(key.id)).to.include({ status: 'suspended', suspendedReason: 'credit_limit' });
      expect(gqlById.get(k3.id)).to.include({ status: 'suspended', suspendedReason: 'owner' });
      expect(dataOf(await gql(app, KEY_GQL, { id: k2.id }, owner.token)).apiKey).to.include({ status: 'suspended', suspendedReason: 'credit_limit' });
    }
  });

  it('resuming a credit-suspended key is refused (409): only the operator can lift the limit', async () => {
    const resumed = await api(t, 'POST', `/api/v1/keys/${k1.id}/resume`, owner.token);
    expect(resumed.status).to.equal(409);
    expect(resumed.body.error.code).to.equal('credit_limit_reached');
  });

  it('another account is unaffected', async () => {
    expect((await dataCall(t, other.secret, PROMPT)).status).to.equal(200);
    expect((await api(t, 'GET', `/api/v1/keys/${other.id}`, bystander.token)).body).to.include({ status: 'active', suspended_reason: null });
    expect((await api(t, 'GET', '/api/v1/account/credit', bystander.token)).body.suspended).to.equal(false);
  });

  it('GET /api/v1/account/credit and GraphQL creditStatus show limit, month_used, remaining 0, suspended', async () => {
    const month = zoneMonth('Asia/Shanghai');
    const rest = (await api(t, 'GET', '/api/v1/account/credit', owner.token)).body;
    expect(rest).to.deep.equal({
      credit_limit: formatMicros(limit),
      currency: 'CNY',
      month,
      month_used: formatMicros(4 * cost),
      reserved: '0',
      remaining: '0',
      suspended: true,
      overflow: 'refuse',
    });
    for (const app of [t, t2]) {
      expect(dataOf(await gql(app, CREDIT_GQL, {}, owner.token)).creditStatus).to.deep.equal({
        creditLimit: formatMicros(limit),
        currency: 'CNY',
        month,
        monthUsed: formatMicros(4 * cost),
        reserved: '0',
        remaining: '0',
        suspended: true,
        overflow: 'refuse',
      });
    }
    // The ledger equals the usage detail it sums.
    const today = zoneDay('Asia/Shanghai');
    const detail = await allUsageItems(t, owner.token, `${month}-01`, shiftDay(today, 1));
    expect(micros(detail.first.total_amount)).to.equal(BigInt(4 * cost));
  });

  it('raising the limit (what the CLI calls) restores the keys at once on both processes; the owner-suspended key stays suspended', async () => {
    await t.app.services.accounts.setCreditLimit(operator(owner.accountId), limit + 100 * cost);
    const waited: number[] = [];
    for (const app of [t, t2]) {
      waited.push(
        await eventually(async () => {
          expect((await probe(app, k1)).status).to.equal(200);
          expect((await probe(app, k2)).status).to.equal(200);
        }, 2000, 2),
      );
      expect((await dataCall(app, k2.secret, VARIANTS[3]!)).status).to.equal(200);
      expect((await dataCall(app, k3.secret, PROMPT)).status).to.equal(403);
    }
    // Each process's credit status shows the calls the other one made.
    for (const app of [t, t2]) {
      expect((await api(app, 'GET', '/api/v1/account/credit', owner.token)).body.month_used).to.equal(formatMicros(6 * cost));
    }
    process.stdout.write(`      limit raised: keys answered again after ${waited[0]} ms (same process) / ${waited[1]} ms (second process)\n`);
    const list = await api(t2, 'GET', '/api/v1/keys?page_size=100', owner.token);
    const byId = new Map(list.body.items.map((k: any) => [k.api_key_id, k]));
    expect(byId.get(k1.id)).to.include({ status: 'active', suspended_reason: null });
    expect(byId.get(k3.id)).to.include({ status: 'suspended', suspended_reason: 'owner' });
    expect(dataOf(await gql(t2, CREDIT_GQL, {}, owner.token)).creditStatus.suspended).to.equal(false);
  });

  it('lowering the limit to month-to-date on one process suspends the keys on the other at once', async () => {
    const used = Number(await monthUsed(owner));
    await eventually(async () => expect((await probe(t2, k1)).status).to.equal(200), 2000, 2);
    await t.app.services.accounts.setCreditLimit(operator(owner.accountId), used);
    const waited = await eventually(async () => expect((await probe(t2, k2)).status).to.equal(429), 2000, 2);
    process.stdout.write(`      limit reached on process 1 reached process 2 after ${waited} ms\n`);
    await expectCreditRefusal(t2, k1, VARIANTS[1]!);
  });

  it('lifting the limit to none restores the keys', async () => {
    await t.app.services.accounts.setCreditLimit(operator(owner.accountId), null);
    for (const app of [t, t2]) await eventually(async () => expect((await probe(app, k1)).status).to.equal(200), 2000, 2);
    expect((await api(t, 'GET', '/api/v1/account/credit', owner.token)).body).to.include({ credit_limit: null, remaining: null, suspended: false });
    expect((await api(t, 'GET', `/api/v1/keys/${k2.id}`, owner.token)).body).to.include({ status: 'active', suspended_reason: null });
  });

  it('a new month restores the keys (no job: the month is read in the account zone)', async () => {
    const { credit, accounts } = t.app.services;
    // Over the limit this month (room for a few calls' worst case next month).
    await accounts.setCreditLimit(operator(owner.accountId), 3 * worst);
    const db = await pool();
    await db.query('update account_month_usage set amount_micros = $3 where account_id = $1 and month = $2', [owner.accountId, zoneMonth('Asia/Shanghai'), 4 * worst]);
    t.app.services.credit.forget(owner.accountId);
    t2.app.services.credit.forget(owner.accountId);
    for (const app of [t, t2]) await eventually(async () => expect((await probe(app, k1)).status).to.equal(429), 2000, 2);

    // The monitor reads a later month afresh, without any invalidation.
    const account = await accounts.get(owner.accountId);
    const month = zoneMonth('Asia/Shanghai');
    const [y, m] = month.split('-').map(Number) as [number, number];
    const nextMonthStart = new Date(Date.UTC(y, m, 1) - 8 * 3600_000); // 00:00 Shanghai on the 1st
    expect(await credit.monthToDate(account, nextMonthStart)).to.deep.equal({ month: zoneMonth('Asia/Shanghai', nextMonthStart), amountMicros: 0 });

    // Simulate the turn: this month's ledger becomes last month's.
    const previous = zoneMonth('Asia/Shanghai', new Date(Date.UTC(y, m - 1, 1) - 8 * 3600_000 - 1));
    await db.query('update account_month_usage set month = $3 where account_id = $1 and month = $2', [owner.accountId, month, previous]);
    t.app.services.credit.forget(owner.accountId);
    t2.app.services.credit.forget(owner.accountId);
    for (const app of [t, t2]) {
      expect((await probe(app, k1)).status).to.equal(200);
      expect((await dataCall(app, k2.secret, PROMPT)).status).to.equal(200);
    }
    const status = (await api(t, 'GET', '/api/v1/account/credit', owner.token)).body;
    expect(status).to.include({ month, suspended: false, month_used: formatMicros(2 * cost) });
    expect((await api(t, 'GET', `/api/v1/keys/${k3.id}`, owner.token)).body).to.include({ status: 'suspended', suspended_reason: 'owner' });
  });
});
