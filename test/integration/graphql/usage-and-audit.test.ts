import { expect } from 'chai';
import { api, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { createKeyGql, dataOf, errorCode, gql, KEY_MUTATIONS, uniqueName, zoneToday } from './graphql-client';

const TIERS = '{ tier tokens unitPrice amount }';
const KEY_USAGE = `query($id: ID!, $start: String, $end: String) {
  keyUsage(id: $id, start: $start, end: $end) { apiKeyId start end currency calls tiers ${TIERS} totalTokens totalAmount }
}`;
const USAGE_RECORDS = `query($start: String, $end: String, $apiKeyId: ID, $model: String, $page: Int, $pageSize: Int) {
  usageRecords(start: $start, end: $end, apiKeyId: $apiKeyId, model: $model, page: $page, pageSize: $pageSize) {
    total page pageSize totalTokens totalAmount
    items { requestId responseId apiKeyId model requestedModel routedModel provider form stream thinking status estimated routeTier tiers { tier tokens } totalTokens amount createdAt }
  }
}`;
const SETTLEMENT = `query($month: String!) {
  settlement(month: $month) { month currency status closedAt keys { apiKeyId name dimension tiers ${TIERS} totalTokens totalAmount } totalTokens totalAmount }
}`;
const AUDIT = `query($apiKeyId: ID, $page: Int, $pageSize: Int) {
  auditEvents(apiKeyId: $apiKeyId, page: $page, pageSize: $pageSize) { total page pageSize items { id actor action apiKeyId changes ip createdAt } }
}`;

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** A REST body in GraphQL's camelCase, so the two transports can be compared field by field. */
function camelize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelize);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), camelize(v)]));
}

/** One call through the data plane, so there is usage to read back. */
async function call(t: TestApp, secret: string, text: string): Promise<string> {
  const response = await fetch(`${t.baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': secret, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'tsxt-general', max_tokens: 32, messages: [{ role: 'user', content: text }] }),
  });
  expect(response.status, await response.clone().text()).to.equal(200);
  return response.headers.get('request-id')!;
}

describe('GraphQL usage, money and audit', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t, { timezone: 'UTC', creditLimitMicros: 1_000_000_000 });
  });
  after(async () => t.close());

  describe('with calls on a key', () => {
    let keyId: string;
    let requestIds: string[];
    const today = zoneToday('UTC');
    const month = today.slice(0, 7);

    before(async () => {
      const created = await createKeyGql(t, owner.token);
      keyId = created.apiKey.id;
      requestIds = [await call(t, created.secret, 'hello there'), await call(t, created.secret, 'and once more')];
    });

    it('keyUsage is the REST per-key usage in camelCase, all six tiers', async () => {
      const graphql = dataOf(await gql(t, KEY_USAGE, { id: keyId, start: today, end: today }, owner.token)).keyUsage;
      const rest = await api(t, 'GET', `/api/v1/keys/${keyId}/usage?start=${today}&end=${today}`, owner.token);
      expect(graphql).to.deep.equal(camelize(rest.body));
      expect(graphql.calls).to.equal(2);
      expect(graphql.totalTokens).to.be.greaterThan(0);
      expect(graphql.tiers.map((l: { tier: string }) => l.tier)).to.have.length(6);
    });

    it('keyUsage defaults to this month so far', async () => {
      const graphql = dataOf(await gql(t, KEY_USAGE, { id: keyId }, owner.token)).keyUsage;
      expect(graphql).to.include({ start: `${month}-01`, end: today, calls: 2 });
    });

    it('usageRecords lists each call, newest first, agreeing with REST', async () => {
      const graphql = dataOf(await gql(t, USAGE_RECORDS, { start: today, end: today, apiKeyId: keyId }, owner.token)).usageRecords;
      const rest = await api(t, 'GET', `/api/v1/usage?start=${today}&end=${today}&api_key_id=${keyId}`, owner.token);
      expect(graphql).to.include({ total: 2, page: 1, pageSize: 50, totalTokens: rest.body.total_tokens, totalAmount: rest.body.total_amount });
      expect(graphql.items.map((i: { requestId: string }) => i.requestId)).to.deep.equal([...requestIds].reverse());
      for (const [index, item] of graphql.items.entries()) {
        const { tiers, ...restItem } = rest.body.items[index] as { tiers: Record<string, number> };
        expect(item.tiers).to.deep.equal(Object.entries(tiers).map(([tier, tokens]) => ({ tier, tokens })));
        const { tiers: _ignored, ...graphqlItem } = item;
        expect(graphqlItem).to.deep.equal(camelize(restItem));
      }
      const paged = dataOf(await gql(t, USAGE_RECORDS, { apiKeyId: keyId, page: 2, pageSize: 1 }, owner.token)).usageRecords;
      expect(paged.items.map((i: { requestId: string }) => i.requestId)).to.deep.equal([requestIds[0]]);
      const otherModel = dataOf(await gql(t, USAGE_RECORDS, { apiKeyId: keyId, model: 'tsxt-code' }, owner.token)).usageRecords;
      expect(otherModel.total).to.equal(0);
    });

    it('settlement of this month is open and sums the key, agreeing with REST', async () => {
      const graphql = dataOf(await gql(t, SETTLEMENT, { month }, owner.token)).settlement;
      const rest = await api(t, 'GET', `/api/v1/settlements/${month}`, owner.token);
      expect(graphql).to.deep.equal(camelize(rest.body));
      expect(graphql).to.include({ status: 'open', closedAt: null, currency: 'CNY' });
      expect(graphql.keys.map((k: { apiKeyId: string }) => k.apiKeyId)).to.deep.equal([keyId]);
    });

    it('creditStatus shows the month so far against the limit, agreeing with REST', async () => {
      const graphql = dataOf(await gql(t, '{ creditStatus { creditLimit currency month monthUsed reserved remaining suspended overflow } }', {}, owner.token)).creditStatus;
      const rest = await api(t, 'GET', '/api/v1/account/credit', owner.token);
      expect(graphql).to.deep.equal(camelize(rest.body));
      expect(graphql).to.include({ creditLimit: '1000', month, suspended: false, overflow: 'refuse' });
      // Far from its limit the account's lease holds a slice of headroom: remaining = limit − used − reserved.
      expect(Number(graphql.remaining)).to.be.closeTo(1000 - Number(graphql.monthUsed) - Number(graphql.reserved), 1e-6);
    });

    it('the key shows its used tokens and last use', async () => {
      const key = dataOf(await gql(t, 'query($id: ID!) { apiKey(id: $id) { usedTokens lastUsedAt } }', { id: keyId }, owner.token)).apiKey;
      const usage = dataOf(await gql(t, KEY_USAGE, { id: keyId }, owner.token)).keyUsage;
      expect(key.usedTokens).to.equal(usage.totalTokens);
      expect(key.lastUsedAt).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    });
  });

  it('refuses malformed dates and months naming the argument', async () => {
    const { apiKey } = await createKeyGql(t, owner.token);
    const badStart = await gql(t, KEY_USAGE, { id: apiKey.id, start: '2026-13-01' }, owner.token);
    expect(errorCode(badStart)).to.equal('invalid_field');
    expect(badStart.errors![0]!.extensions.field).to.equal('start');
    const badMonth = await gql(t, SETTLEMENT, { month: '2026-1' }, owner.token);
    expect(errorCode(badMonth)).to.equal('invalid_field');
    expect(badMonth.errors![0]!.extensions.field).to.equal('month');
    const badPage = await gql(t, USAGE_RECORDS, { pageSize: 501 }, owner.token);
    expect(badPage.errors![0]!.extensions).to.include({ code: 'invalid_field', field: 'pageSize' });
  });

  it('models lists the catalog neutral names', async () => {
    const models = dataOf(await gql(t, '{ models { name displayName createdAt } }', {}, owner.token)).models;
    const expected = t.app.services.catalog.models.map((m) => ({ name: m.name, displayName: m.displayName, createdAt: m.createdAt }));
    expect(models).to.deep.equal(expected);
    expect(models.map((m: { name: string }) => m.name)).to.include('tsxt-general');
    expect(errorCode(await gql(t, '{ models { name } }'))).to.equal('missing_session');
  });

  it('auditEvents lists who did what to a key, with the changed fields, newest first', async () => {
    const { apiKey } = await createKeyGql(t, owner.token, { expiresAt: '2999-01-01' });
    const newName = uniqueName('audited');
    await gql(t, KEY_MUTATIONS.update, { id: apiKey.id, input: { name: newName, expiresAt: null } }, owner.token);
    await gql(t, KEY_MUTATIONS.suspend, { id: apiKey.id }, owner.token);
    await gql(t, KEY_MUTATIONS.suspend, { id: apiKey.id }, owner.token); // idempotent: no event
    await gql(t, KEY_MUTATIONS.cancel, { id: apiKey.id }, owner.token);

    const page = dataOf(await gql(t, AUDIT, { apiKeyId: apiKey.id }, owner.token)).auditEvents;
    expect(page).to.include({ total: 4, page: 1, pageSize: 50 });
    expect(page.items.map((e: { action: string }) => e.action)).to.deep.equal(['key.cancel', 'key.suspend', 'key.update', 'key.create']);
    for (const event of page.items) {
      expect(event).to.include({ actor: owner.email, apiKeyId: apiKey.id, ip: '127.0.0.1' });
      expect(new Date(event.createdAt).toISOString()).to.equal(event.createdAt);
    }
    const [cancel, suspend, update, create] = page.items;
    expect(cancel.changes.status).to.deep.equal({ from: 'suspended', to: 'cancelled' });
    expect(suspend.changes.status).to.deep.equal({ from: 'active', to: 'suspended' });
    expect(update.changes).to.deep.equal({ name: { from: apiKey.name, to: newName }, expires_at: { from: '2999-01-01', to: null } });
    expect(create.changes).to.include.keys('name', 'dimension', 'model_scope', 'expires_at');

    const paged = dataOf(await gql(t, AUDIT, { apiKeyId: apiKey.id, page: 2, pageSize: 3 }, owner.token)).auditEvents;
    expect(paged.items.map((e: { action: string }) => e.action)).to.deep.equal(['key.create']);

    const viewerSees = await createAccount(t);
    expect(dataOf(await gql(t, AUDIT, {}, viewerSees.token)).auditEvents.total, 'another account sees none of it').to.equal(0);
  });
});
