import { expect } from 'chai';
import { addUser, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { CREATE_KEY, createKeyGql, dataOf, errorCode, gql, KEY_FIELDS, KEY_MUTATIONS, uniqueName, zoneToday } from './graphql-client';

const KEY_QUERY = `query($id: ID!) { apiKey(id: $id) { ${KEY_FIELDS} } }`;
const LIST_QUERY = `query($filter: ApiKeyFilterInput, $page: Int, $pageSize: Int, $sort: String, $order: String) {
  apiKeys(filter: $filter, page: $page, pageSize: $pageSize, sort: $sort, order: $order) { total page pageSize items { ${KEY_FIELDS} } }
}`;
const UPDATE = KEY_MUTATIONS.update;

/** Every mutation of a key, with the variables it needs. */
const MUTATIONS: Array<[string, string, (id: string) => Record<string, unknown>]> = [
  ['updateApiKey', KEY_MUTATIONS.update, (id) => ({ id, input: { name: uniqueName() } })],
  ['suspendApiKey', KEY_MUTATIONS.suspend, (id) => ({ id })],
  ['resumeApiKey', KEY_MUTATIONS.resume, (id) => ({ id })],
  ['cancelApiKey', KEY_MUTATIONS.cancel, (id) => ({ id })],
];

describe('GraphQL API keys', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t, { timezone: 'UTC' });
  });
  after(async () => t.close());

  describe('the secret', () => {
    it('is returned by createApiKey once and never by apiKeys or apiKey', async () => {
      const name = uniqueName();
      const created = await gql(t, CREATE_KEY, { input: { name, dimension: '业务线', modelScope: ['tsxt-general', 'tsxt-code'] } }, owner.token);
      const { secret, apiKey } = dataOf(created).createApiKey;
      expect(secret).to.match(/^tsxt-[0-9A-Za-z]{46}$/);
      expect(apiKey).to.include({ name, dimension: '业务线', status: 'active', suspendedReason: null, usedTokens: 0, expiresAt: null, lastUsedAt: null });
      expect(apiKey.id).to.match(/^key_[0-9A-Z]{26}$/);
      expect(apiKey.modelScope).to.deep.equal(['tsxt-general', 'tsxt-code']);
      expect(new Date(apiKey.createdAt).toISOString()).to.equal(apiKey.createdAt);
      expect(apiKey.secretHint.startsWith(secret.slice(0, 9))).to.equal(true);
      expect(JSON.stringify(apiKey)).not.to.include(secret);

      const one = await gql(t, KEY_QUERY, { id: apiKey.id }, owner.token);
      const list = await gql(t, LIST_QUERY, { pageSize: 100 }, owner.token);
      const updated = await gql(t, UPDATE, { id: apiKey.id, input: { name: uniqueName() } }, owner.token);
      expect(dataOf(one).apiKey.id).to.equal(apiKey.id);
      expect(dataOf(list).apiKeys.items.map((k: { id: string }) => k.id)).to.include(apiKey.id);
      for (const response of [one, list, updated]) expect(response.text).not.to.include(secret);
      expect(t.logs.join('')).not.to.include(secret);
    });

    it('has no field to ask for on keys', async () => {
      const { apiKey } = await createKeyGql(t, owner.token);
      const response = await gql(t, `query($id: ID!) { apiKey(id: $id) { id secret } }`, { id: apiKey.id }, owner.token);
      expect(errorCode(response)).to.equal('graphql_validation_failed');
    });
  });

  describe('roles and accounts', () => {
    it('gives a viewer read_only_role on every mutation and leaves the key unchanged', async () => {
      const viewer = await addUser(t, owner.accountId, 'viewer');
      const { apiKey } = await createKeyGql(t, owner.token);
      const create = await gql(t, CREATE_KEY, { input: { name: uniqueName(), dimension: '部门', modelScope: ['tsxt-general'] } }, viewer.token);
      expect(errorCode(create)).to.equal('read_only_role');
      expect(create.errors![0]!.extensions.http).to.equal(403);
      for (const [name, mutation, variables] of MUTATIONS) {
        const response = await gql(t, mutation, variables(apiKey.id), viewer.token);
        expect(errorCode(response), name).to.equal('read_only_role');
      }
      const after = dataOf(await gql(t, KEY_QUERY, { id: apiKey.id }, viewer.token)).apiKey;
      expect(after).to.deep.equal(apiKey);
    });

    it('lets an admin change keys', async () => {
      const admin = await addUser(t, owner.accountId, 'admin');
      const { apiKey } = await createKeyGql(t, admin.token);
      const response = await gql(t, KEY_MUTATIONS.suspend, { id: apiKey.id }, admin.token);
      expect(dataOf(response).result.status).to.equal('suspended');
    });

    it("answers key_not_found for another account's key on apiKey, keyUsage and every mutation", async () => {
      const other = await createAccount(t);
      const { apiKey } = await createKeyGql(t, other.token);
      const operations: Array<[string, string, Record<string, unknown>]> = [
        ['apiKey', KEY_QUERY, { id: apiKey.id }],
        ['keyUsage', 'query($id: ID!) { keyUsage(id: $id) { calls } }', { id: apiKey.id }],
        ['auditEvents', 'query($id: ID) { auditEvents(apiKeyId: $id) { total } }', { id: apiKey.id }],
        ...MUTATIONS.map(([name, mutation, variables]): [string, string, Record<string, unknown>] => [name, mutation, variables(apiKey.id)]),
      ];
      for (const [name, query, variables] of operations) {
        const response = await gql(t, query, variables, owner.token);
        if (name === 'auditEvents') {
          expect(dataOf(response).auditEvents.total, 'no events of another account').to.equal(0);
          continue;
        }
        expect(errorCode(response), name).to.equal('key_not_found');
        expect(response.errors![0]!.extensions.http, name).to.equal(404);
      }
      const list = dataOf(await gql(t, LIST_QUERY, { pageSize: 100 }, owner.token)).apiKeys;
      expect(list.items.map((k: { id: string }) => k.id)).not.to.include(apiKey.id);
      expect(dataOf(await gql(t, KEY_QUERY, { id: apiKey.id }, other.token)).apiKey.status).to.equal('active');
    });

    it('answers key_not_found for an id that does not exist', async () => {
      const response = await gql(t, KEY_QUERY, { id: 'key_00000000000000000000000000' }, owner.token);
      expect(errorCode(response)).to.equal('key_not_found');
    });
  });

  describe('validation', () => {
    const tooLong = 'x'.repeat(65);
    const CASES: Array<[string, Record<string, unknown>, string, string]> = [
      ['an empty name', { name: '   ' }, 'invalid_field', 'name'],
      ['a 65-character name', { name: tooLong }, 'invalid_field', 'name'],
      ['an unknown dimension', { dimension: '部门X' }, 'invalid_field', 'dimension'],
      ['an empty model scope', { modelScope: [] }, 'invalid_field', 'model_scope'],
      ['a model outside the catalog', { modelScope: ['tsxt-general', 'gpt-nope'] }, 'unknown_model', 'model_scope'],
      ['a malformed expiry', { expiresAt: '2030-02-30' }, 'invalid_field', 'expires_at'],
      ['an expiry in the past', { expiresAt: '2020-01-01' }, 'invalid_field', 'expires_at'],
    ];
    for (const [label, override, code, field] of CASES) {
      it(`refuses ${label} on create with ${code} naming ${field}`, async () => {
        const input = { name: uniqueName(), dimension: '部门', modelScope: ['tsxt-general'], ...override };
        const response = await gql(t, CREATE_KEY, { input }, owner.token);
        expect(errorCode(response)).to.equal(code);
        expect(response.errors![0]!.extensions).to.include({ field, http: 400 });
      });
    }

    it('names the unknown model in the message', async () => {
      const response = await gql(t, CREATE_KEY, { input: { name: uniqueName(), dimension: '部门', modelScope: ['gpt-nope'] } }, owner.token);
      expect(response.errors![0]!.message).to.include('gpt-nope');
    });

    it('refuses a name another live key has (name_taken) and allows it again after cancel', async () => {
      const { apiKey } = await createKeyGql(t, owner.token);
      const clash = await gql(t, CREATE_KEY, { input: { name: apiKey.name, dimension: '部门', modelScope: ['tsxt-general'] } }, owner.token);
      expect(errorCode(clash)).to.equal('name_taken');
      expect(clash.errors![0]!.extensions).to.include({ field: 'name', http: 409 });
      await gql(t, KEY_MUTATIONS.cancel, { id: apiKey.id }, owner.token);
      const again = await gql(t, CREATE_KEY, { input: { name: apiKey.name, dimension: '部门', modelScope: ['tsxt-general'] } }, owner.token);
      expect(dataOf(again).createApiKey.apiKey.name).to.equal(apiKey.name);
    });

    it('refuses an update with nothing in it and an update to a taken name', async () => {
      const a = (await createKeyGql(t, owner.token)).apiKey;
      const b = (await createKeyGql(t, owner.token)).apiKey;
      const empty = await gql(t, UPDATE, { id: a.id, input: {} }, owner.token);
      expect(errorCode(empty)).to.equal('invalid_field');
      const taken = await gql(t, UPDATE, { id: a.id, input: { name: b.name } }, owner.token);
      expect(errorCode(taken)).to.equal('name_taken');
    });

    it('refuses out-of-range paging and unknown filter values, naming the argument', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ page: 0 }, 'page'],
        [{ pageSize: 101 }, 'pageSize'],
        [{ pageSize: 0 }, 'pageSize'],
        [{ sort: 'secret' }, 'sort'],
        [{ order: 'sideways' }, 'order'],
        [{ filter: { status: 'paused' } }, 'filter.status'],
        [{ filter: { dimension: 'team' } }, 'filter.dimension'],
      ];
      for (const [variables, field] of cases) {
        const response = await gql(t, LIST_QUERY, variables, owner.token);
        expect(errorCode(response), field).to.equal('invalid_field');
        expect(response.errors![0]!.extensions.field).to.equal(field);
      }
    });
  });

  describe('update', () => {
    it('changes only the fields sent: absent expiresAt keeps it, explicit null clears it', async () => {
      const expiry = '2999-01-31';
      const { apiKey } = await createKeyGql(t, owner.token, { expiresAt: expiry });
      expect(apiKey.expiresAt).to.equal(expiry);

      const renamed = dataOf(await gql(t, UPDATE, { id: apiKey.id, input: { name: uniqueName(), dimension: '成本中心' } }, owner.token)).result;
      expect(renamed).to.include({ expiresAt: expiry, dimension: '成本中心' });
      expect(renamed.modelScope).to.deep.equal(['tsxt-general']);

      const scoped = dataOf(await gql(t, UPDATE, { id: apiKey.id, input: { modelScope: ['tsxt-fast'] } }, owner.token)).result;
      expect(scoped).to.include({ name: renamed.name, expiresAt: expiry });
      expect(scoped.modelScope).to.deep.equal(['tsxt-fast']);

      const never = dataOf(await gql(t, UPDATE, { id: apiKey.id, input: { expiresAt: null } }, owner.token)).result;
      expect(never.expiresAt).to.equal(null);
      expect(never.name).to.equal(renamed.name);
    });

    it('accepts an expiry of today', async () => {
      const today = zoneToday('UTC');
      const { apiKey } = await createKeyGql(t, owner.token, { expiresAt: today });
      expect(apiKey).to.include({ expiresAt: today, status: 'active' });
    });
  });

  describe('listing', () => {
    it('filters by status, dimension and name, pages, and sorts', async () => {
      const tag = uniqueName('list');
      const a = (await createKeyGql(t, owner.token, { name: `${tag}-a`, dimension: '业务线' })).apiKey;
      const b = (await createKeyGql(t, owner.token, { name: `${tag}-b`, dimension: '业务线' })).apiKey;
      const c = (await createKeyGql(t, owner.token, { name: `${tag}-c`, dimension: '成本中心' })).apiKey;
      await gql(t, KEY_MUTATIONS.suspend, { id: b.id }, owner.token);

      const byName = dataOf(await gql(t, LIST_QUERY, { filter: { q: tag }, sort: 'name', order: 'asc' }, owner.token)).apiKeys;
      expect(byName.total).to.equal(3);
      expect(byName.items.map((k: { id: string }) => k.id)).to.deep.equal([a.id, b.id, c.id]);

      const line = dataOf(await gql(t, LIST_QUERY, { filter: { q: tag, dimension: '业务线', status: 'active' } }, owner.token)).apiKeys;
      expect(line.items.map((k: { id: string }) => k.id)).to.deep.equal([a.id]);

      const page2 = dataOf(await gql(t, LIST_QUERY, { filter: { q: tag }, sort: 'name', order: 'desc', page: 2, pageSize: 2 }, owner.token)).apiKeys;
      expect(page2).to.include({ total: 3, page: 2, pageSize: 2 });
      expect(page2.items.map((k: { id: string }) => k.id)).to.deep.equal([a.id]);
    });
  });

  describe('authentication', () => {
    it('answers missing_session without a bearer and invalid_session with a bad one', async () => {
      const missing = await gql(t, LIST_QUERY, {});
      expect(errorCode(missing)).to.equal('missing_session');
      expect(missing.errors![0]!.extensions.http).to.equal(401);
      const invalid = await gql(t, LIST_QUERY, {}, 'tsxs_not-a-real-session');
      expect(errorCode(invalid)).to.equal('invalid_session');
      const mutation = await gql(t, CREATE_KEY, { input: { name: uniqueName(), dimension: '部门', modelScope: ['tsxt-general'] } });
      expect(errorCode(mutation)).to.equal('missing_session');
    });
  });
});
