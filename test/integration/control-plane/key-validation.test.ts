// Every validation rule of the key endpoints (docs/architecture.md §14, §16.3): 400 with
// `error.field` naming the field and a message that names it too; nothing is
// created or changed by a refused request.
import { expect } from 'chai';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { addDays, zoneToday } from './support';

const ZONE = 'Asia/Shanghai';
const today = () => zoneToday(ZONE);
const valid = { name: 'valid-name', dimension: '部门', model_scope: ['tsxt-general'] };

interface BodyCase {
  title: string;
  body: () => unknown;
  field: string;
  /** The message must match this (it always has to name the field as well); a function is read when the request is sent, for dates. */
  message?: RegExp | (() => RegExp);
}

const CREATE_CASES: BodyCase[] = [
  { title: 'name missing', body: () => ({ dimension: '部门', model_scope: ['tsxt-general'] }), field: 'name' },
  { title: 'name empty', body: () => ({ ...valid, name: '' }), field: 'name' },
  { title: 'name only spaces', body: () => ({ ...valid, name: '   ' }), field: 'name' },
  { title: 'name of 65 characters', body: () => ({ ...valid, name: 'n'.repeat(65) }), field: 'name', message: /64/ },
  { title: 'name of 65 CJK characters', body: () => ({ ...valid, name: '名'.repeat(65) }), field: 'name', message: /64/ },
  { title: 'name a number', body: () => ({ ...valid, name: 42 }), field: 'name' },
  { title: 'name null', body: () => ({ ...valid, name: null }), field: 'name' },
  { title: 'dimension missing', body: () => ({ name: 'x', model_scope: ['tsxt-general'] }), field: 'dimension', message: /部门.*业务线.*成本中心/ },
  { title: 'dimension not one of the three', body: () => ({ ...valid, dimension: 'department' }), field: 'dimension', message: /部门.*业务线.*成本中心/ },
  { title: 'dimension a near miss', body: () => ({ ...valid, dimension: '部门 ' }), field: 'dimension', message: /部门.*业务线.*成本中心/ },
  { title: 'model_scope missing', body: () => ({ name: 'x', dimension: '部门' }), field: 'model_scope' },
  { title: 'model_scope empty', body: () => ({ ...valid, model_scope: [] }), field: 'model_scope' },
  { title: 'model_scope not an array', body: () => ({ ...valid, model_scope: 'tsxt-general' }), field: 'model_scope' },
  { title: 'model_scope with an unknown model', body: () => ({ ...valid, model_scope: ['tsxt-general', 'gpt-nonexistent-9'] }), field: 'model_scope', message: /gpt-nonexistent-9/ },
  { title: 'expires_at not a date', body: () => ({ ...valid, expires_at: 'next tuesday' }), field: 'expires_at' },
  { title: 'expires_at a timestamp', body: () => ({ ...valid, expires_at: `${addDays(today(), 3)}T00:00:00Z` }), field: 'expires_at' },
  { title: 'expires_at 2026-02-30', body: () => ({ ...valid, expires_at: '2026-02-30' }), field: 'expires_at' },
  { title: 'expires_at a number', body: () => ({ ...valid, expires_at: 20991231 }), field: 'expires_at' },
  { title: 'expires_at yesterday in the account zone', body: () => ({ ...valid, expires_at: addDays(today(), -1) }), field: 'expires_at', message: () => new RegExp(today()) },
  { title: 'an unknown body field', body: () => ({ ...valid, quota: 100 }), field: 'quota' },
  { title: 'name holding U+0000', body: () => ({ ...valid, name: 'a\u0000b' }), field: 'name', message: /U\+0000/ },
  { title: 'name holding half a surrogate pair', body: () => ({ ...valid, name: 'a\ud800' }), field: 'name', message: /surrogate/ },
  { title: 'model_scope holding half a surrogate pair', body: () => ({ ...valid, model_scope: ['\udc00'] }), field: 'model_scope.0', message: /surrogate/ },
  { title: 'a body that is an array', body: () => [valid], field: 'body' },
  { title: 'a body that is a string', body: () => '"just a string"', field: 'body' },
  { title: 'a body that is null', body: () => 'null', field: 'body' },
  { title: 'a body that is not JSON', body: () => '{"name": "x", ', field: 'body' },
];

const UPDATE_CASES: BodyCase[] = [
  { title: 'an empty body', body: () => ({}), field: 'body' },
  { title: 'name empty', body: () => ({ name: '' }), field: 'name' },
  { title: 'name of 65 characters', body: () => ({ name: 'n'.repeat(65) }), field: 'name', message: /64/ },
  { title: 'name a boolean', body: () => ({ name: true }), field: 'name' },
  { title: 'dimension unknown', body: () => ({ dimension: '部' }), field: 'dimension', message: /部门.*业务线.*成本中心/ },
  { title: 'model_scope empty', body: () => ({ model_scope: [] }), field: 'model_scope' },
  { title: 'model_scope with an unknown model', body: () => ({ model_scope: ['no-such-model'] }), field: 'model_scope', message: /no-such-model/ },
  { title: 'expires_at yesterday in the account zone', body: () => ({ expires_at: addDays(today(), -1) }), field: 'expires_at' },
  { title: 'expires_at 2026-02-30', body: () => ({ expires_at: '2026-02-30' }), field: 'expires_at' },
  { title: 'an unknown body field', body: () => ({ name: 'ok-name', status: 'active' }), field: 'status' },
  { title: 'a body that is not JSON', body: () => 'name=x', field: 'body' },
  { title: 'a body that is an array', body: () => '[]', field: 'body' },
];

const QUERY_CASES: Array<{ query: string; field: string }> = [
  { query: 'page=0', field: 'page' },
  { query: 'page=-1', field: 'page' },
  { query: 'page=abc', field: 'page' },
  { query: 'page_size=0', field: 'page_size' },
  { query: 'page_size=101', field: 'page_size' },
  { query: 'page_size=1.5', field: 'page_size' },
  { query: 'status=bogus', field: 'status' },
  { query: 'status=Active', field: 'status' },
  { query: 'dimension=department', field: 'dimension' },
  { query: 'sort=bogus', field: 'sort' },
  { query: 'sort=secret_hash', field: 'sort' },
  { query: 'order=sideways', field: 'order' },
  { query: `q=${'x'.repeat(65)}`, field: 'q' },
];

describe('REST control plane: key validation', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t, { timezone: ZONE });
  });

  after(async () => {
    await t.close();
  });

  const total = async (token: string) => (await api(t, 'GET', '/api/v1/keys?page_size=1', token)).body.total as number;

  function expectFieldError(response: { status: number; body: any }, field: string, message?: RegExp): void {
    expect(response.status, JSON.stringify(response.body)).to.equal(400);
    expect(response.body.error.field).to.equal(field);
    expect(response.body.error.code).to.be.a('string').and.match(/^[a-z_]+$/);
    // The message names the field (the base name for `model_scope[1]`-style paths).
    expect(response.body.error.message).to.include(field);
    if (message) expect(response.body.error.message).to.match(message);
    expect(JSON.stringify(response.body)).to.not.match(/ at .*\.ts:\d+|select |insert /i);
  }

  describe('POST /api/v1/keys', () => {
    for (const c of CREATE_CASES) {
      it(`${c.title} → 400 naming ${c.field}`, async () => {
        const account = await createAccount(t, { timezone: ZONE });
        const response = await api(t, 'POST', '/api/v1/keys', account.token, c.body());
        expectFieldError(response, c.field, typeof c.message === 'function' ? c.message() : c.message);
        expect(await total(account.token), 'a refused create must not create a key').to.equal(0);
      });
    }

    it('expires_at null means never: 201 with expires_at null', async () => {
      const created = await api(t, 'POST', '/api/v1/keys', owner.token, { ...valid, name: 'never-expires', expires_at: null });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body.expires_at).to.equal(null);
      expect(created.body.status).to.equal('active');
    });

    it('expires_at omitted means never as well', async () => {
      const created = await api(t, 'POST', '/api/v1/keys', owner.token, { ...valid, name: 'no-expiry-given' });
      expect(created.status).to.equal(201);
      expect(created.body.expires_at).to.equal(null);
    });

    it('expires_at today in the account zone is accepted and the key is active', async () => {
      const created = await api(t, 'POST', '/api/v1/keys', owner.token, { ...valid, name: 'expires-today', expires_at: today() });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.include({ expires_at: today(), status: 'active' });
    });

    it('accepts a name of exactly 64 characters, also in CJK, and every dimension', async () => {
      const dims = ['部门', '业务线', '成本中心'];
      const names = ['a'.repeat(64), '名'.repeat(64), '财务报表助手'];
      for (const [i, dimension] of dims.entries()) {
        const created = await api(t, 'POST', '/api/v1/keys', owner.token, { ...valid, name: names[i], dimension });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        expect(created.body).to.include({ name: names[i], dimension });
      }
    });

    it('a second live key with the same name → 409 name_taken; the first key is untouched', async () => {
      const first = await createKey(t, owner.token, { name: 'duplicate-me' });
      const second = await api(t, 'POST', '/api/v1/keys', owner.token, { ...valid, name: 'duplicate-me' });
      expect(second.status).to.equal(409);
      expect(second.body.error.code).to.equal('name_taken');
      expect(second.body.error.field).to.equal('name');
      const listed = await api(t, 'GET', '/api/v1/keys?q=duplicate-me', owner.token);
      expect(listed.body.items.map((k: { api_key_id: string }) => k.api_key_id)).to.deep.equal([first.api_key_id]);
    });

    it('a name taken by a suspended or expired key is still taken', async () => {
      const suspended = await createKey(t, owner.token, { name: 'suspended-holder' });
      await api(t, 'POST', `/api/v1/keys/${suspended.api_key_id}/suspend`, owner.token);
      const clash = await api(t, 'POST', '/api/v1/keys', owner.token, { ...valid, name: 'suspended-holder' });
      expect(clash.status).to.equal(409);
      expect(clash.body.error.code).to.equal('name_taken');
    });

    it('a name is reusable after its key is cancelled (201, a new key and a new secret)', async () => {
      const old = await createKey(t, owner.token, { name: 'reuse-me' });
      expect((await api(t, 'DELETE', `/api/v1/keys/${old.api_key_id}`, owner.token)).status).to.equal(200);
      const again = await api(t, 'POST', '/api/v1/keys', owner.token, { ...valid, name: 'reuse-me' });
      expect(again.status, JSON.stringify(again.body)).to.equal(201);
      expect(again.body.api_key_id).to.not.equal(old.api_key_id);
      expect(again.body.api_key).to.not.equal(old.api_key);
      // ... and once more: two cancelled keys may share the name.
      await api(t, 'DELETE', `/api/v1/keys/${again.body.api_key_id}`, owner.token);
      expect((await api(t, 'POST', '/api/v1/keys', owner.token, { ...valid, name: 'reuse-me' })).status).to.equal(201);
    });

    it('the same name in another account is fine', async () => {
      const other = await createAccount(t);
      await createKey(t, owner.token, { name: 'shared-name' });
      expect((await api(t, 'POST', '/api/v1/keys', other.token, { ...valid, name: 'shared-name' })).status).to.equal(201);
    });
  });

  describe('PUT /api/v1/keys/:id', () => {
    for (const c of UPDATE_CASES) {
      it(`${c.title} → 400 naming ${c.field}, key unchanged`, async () => {
        const key = await createKey(t, owner.token);
        const before = (await api(t, 'GET', `/api/v1/keys/${key.api_key_id}`, owner.token)).body;
        const response = await api(t, 'PUT', `/api/v1/keys/${key.api_key_id}`, owner.token, c.body());
        expectFieldError(response, c.field, typeof c.message === 'function' ? c.message() : c.message);
        const after = (await api(t, 'GET', `/api/v1/keys/${key.api_key_id}`, owner.token)).body;
        expect(after).to.deep.equal(before);
      });
    }

    it('renaming to a name another live key holds → 409 name_taken', async () => {
      await createKey(t, owner.token, { name: 'taken-by-other' });
      const mine = await createKey(t, owner.token, { name: 'wants-to-rename' });
      const response = await api(t, 'PUT', `/api/v1/keys/${mine.api_key_id}`, owner.token, { name: 'taken-by-other' });
      expect(response.status).to.equal(409);
      expect(response.body.error.code).to.equal('name_taken');
      expect((await api(t, 'GET', `/api/v1/keys/${mine.api_key_id}`, owner.token)).body.name).to.equal('wants-to-rename');
    });

    it('renaming to its own name, or to the name of a cancelled key, is fine', async () => {
      const gone = await createKey(t, owner.token, { name: 'was-cancelled' });
      await api(t, 'DELETE', `/api/v1/keys/${gone.api_key_id}`, owner.token);
      const mine = await createKey(t, owner.token, { name: 'renamer' });
      expect((await api(t, 'PUT', `/api/v1/keys/${mine.api_key_id}`, owner.token, { name: 'renamer' })).status).to.equal(200);
      const renamed = await api(t, 'PUT', `/api/v1/keys/${mine.api_key_id}`, owner.token, { name: 'was-cancelled' });
      expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
      expect(renamed.body.name).to.equal('was-cancelled');
    });

    it('expires_at null on update clears the expiry', async () => {
      const key = await createKey(t, owner.token, { expires_at: addDays(today(), 5) });
      const response = await api(t, 'PUT', `/api/v1/keys/${key.api_key_id}`, owner.token, { expires_at: null });
      expect(response.status).to.equal(200);
      expect(response.body.expires_at).to.equal(null);
    });
  });

  describe('GET /api/v1/keys query parameters', () => {
    for (const c of QUERY_CASES) {
      it(`${c.query.slice(0, 30)} → 400 naming ${c.field}`, async () => {
        const response = await api(t, 'GET', `/api/v1/keys?${c.query}`, owner.token);
        expectFieldError(response, c.field);
      });
    }

    it('the boundaries page=1, page_size=1 and page_size=100 are accepted', async () => {
      for (const query of ['page=1', 'page_size=1', 'page_size=100']) {
        const response = await api(t, 'GET', `/api/v1/keys?${query}`, owner.token);
        expect(response.status, query).to.equal(200);
      }
    });
  });
});
