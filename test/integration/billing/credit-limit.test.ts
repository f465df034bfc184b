// Spec §3/§7/§8, docs/architecture.md §14/§9: one aggregate credit limit per account on the
// month-to-date amount, on top of reservations. A call is admitted only when
// its worst case fits what is neither used nor reserved; one that does not is
// refused alone (429 naming its worst case and the true remaining) while the
// keys stay active. Once what the limit leaves cannot pay for a minimal useful
// call (the catalog's minimalCallMicros), the account is AT its limit: every
// key of the account reads suspended (credit_limit) and answers 429
// (x-should-retry: false, so official clients do not retry) until the limit
// is raised or the month turns — on every gateway process — while keys the
// owner suspended stay suspended.
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { formatMicros } from '../../../src/core/decimal';
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

/** An output budget no small limit covers: its worst case is refused on its own. */
const OVERSIZED: CallSpec = { ...PROMPT, maxTokens: 200_000 };

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
  /** The minimal useful call of the catalog (micro-units): the at-limit threshold. */
  let minimal: number;
  let limit: number;

  const keyOf = (created: any): Key => ({ id: created.api_key_id, secret: created.api_key });
  const monthUsed = async (account: TestAccount) => micros((await api(t, 'GET', '/api/v1/account/credit', account.token)).body.month_used);

  before(async () => {
    t = await startTestApp();
    t2 = await startTestApp();
    minimal = t.app.services.catalog.minimalCallMicros;
    // What one call costs, measured on an unlimited account with the same request.
    const meter = await createAccount(t, { timezone: 'UTC' });
    const meterKey = keyOf(await createKey(t, meter.token));
    expect((await dataCall(t, meterKey.secret, PROMPT)).status).to.equal(200);
    cost = Number(await monthUsed(meter));
    expect(cost).to.be.greaterThan(0);
    // After three calls the limit still leaves a minimal useful call and half a call more; after the fourth it does not.
    limit = minimal + 3 * cost + Math.floor(cost / 2);

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

  it('a call whose own worst case does not fit is refused alone, naming its worst case and the true remaining; the keys stay active', async () => {
    const refusal = async (app: TestApp) => {
      const refused = await dataCall(app, k1.secret, OVERSIZED);
      expect(refused.status, JSON.stringify(refused.body)).to.equal(429);
      expect(refused.headers.get('x-should-retry')).to.equal('false');
      const match = /worst case \(([\d.]+) CNY.*exceeds the ([\d.]+) CNY not yet used or reserved/.exec(refused.body.error.message);
      expect(match, refused.body.error.message).to.not.equal(null);
      return { worst: micros(match![1]!), remaining: micros(match![2]!) };
    };
    const first = await refusal(t);
    expect(first.worst > BigInt(limit)).to.equal(true);
    expect(first.remaining, 'nothing used or reserved: the whole limit').to.equal(BigInt(limit));
    expect((await api(t, 'GET', '/api/v1/account/credit', owner.token)).body).to.include({ remaining: formatMicros(limit), suspended: false });
    // Another process holds a reservation: the message counts it, as the credit view does (not this process's own lease alone).
    const db = await pool();
    const held = 1_000;
    await db.query(
      `insert into credit_leases (account_id, month, holder, amount_micros, expires_at) values ($1, $2, 'another-process', $3, now() + interval '1 minute')`,
      [owner.accountId, zoneMonth('Asia/Shanghai'), held],
    );
    try {
      const second = await refusal(t2);
      expect(second.remaining).to.equal(BigInt(limit - held));
      const view = (await api(t, 'GET', '/api/v1/account/credit', owner.token)).body;
      expect(view).to.include({ reserved: formatMicros(held), remaining: formatMicros(limit - held), suspended: false });
    } finally {
      await db.query(`delete from credit_leases where holder = 'another-process'`);
    }
    expect((await probe(t, k1)).status).to.equal(200);
    expect((await api(t, 'GET', `/api/v1/keys/${k1.id}`, owner.token)).body).to.include({ status: 'active', suspended_reason: null });
    expect(await monthUsed(owner)).to.equal(0n);
  });

  it('sequential calls on any key are admitted until what the limit leaves cannot pay for a minimal useful call: then the account is at its limit', async () => {
    let calls = 0;
    for (;;) {
      const key = calls % 2 === 0 ? k1 : k2;
      const result = await dataCall(t, key.secret, VARIANTS[calls % VARIANTS.length]!);
      expect(result.status, `call ${calls}: ${JSON.stringify(result.body)}`).to.equal(200);
      calls++;
      const left = limit - Number(await monthUsed(owner));
      if (left < minimal) break;
      // Not at its limit yet: every key is usable and reads active.
      expect((await probe(t, k1)).status, `after call ${calls}`).to.equal(200);
      expect((await api(t, 'GET', `/api/v1/keys/${k2.id}`, owner.token)).body).to.include({ status: 'active', suspended_reason: null });
      expect((await api(t, 'GET', '/api/v1/account/credit', owner.token)).body.suspended).to.equal(false);
    }
    expect(calls, 'three calls leave a minimal call and half a call; the fourth does not').to.equal(4);
    expect(await monthUsed(owner)).to.equal(BigInt(4 * cost));
    // The usage statement told every process the moment the account came to its limit.
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
    // At its limit, no call is small enough: the suspension refuses before any worst case is weighed.
    const small = await dataCall(t, k2.secret, { ...PROMPT, maxTokens: 16 });
    expect(small.status).to.equal(429);
    expect(small.body.error.message).to.match(/all its keys are suspended/);
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

  it('GET /api/v1/account/credit and GraphQL creditStatus show the limit, month_used, what remains (less than a minimal call) and suspended', async () => {
    const month = zoneMonth('Asia/Shanghai');
    const remaining = formatMicros(limit - 4 * cost);
    const rest = (await api(t, 'GET', '/api/v1/account/credit', owner.token)).body;
    expect(rest).to.deep.equal({
      credit_limit: formatMicros(limit),
      currency: 'CNY',
      month,
      month_used: formatMicros(4 * cost),
      reserved: '0',
      remaining,
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
        remaining,
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
    // At the limit this month (room for a minimal call and a few more next month).
    const next = minimal + 10 * cost;
    await accounts.setCreditLimit(operator(owner.accountId), next);
    const db = await pool();
    await db.query('update account_month_usage set amount_micros = $3 where account_id = $1 and month = $2', [owner.accountId, zoneMonth('Asia/Shanghai'), next - minimal + 1]);
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
