// Account isolation and roles (docs/architecture.md §14): another account's key is a 404
// exactly like a missing one (no existence oracle), viewers read but never
// change, and every call needs a live session.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { addUser, api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { auditEventsOf, zoneToday } from './support';

interface Call {
  name: string;
  method: string;
  path: (id: string) => string;
  body?: unknown;
}

const usageRange = () => {
  const today = zoneToday('UTC');
  return `start=${today.slice(0, 8)}01&end=${today}`;
};

const KEY_CALLS: Call[] = [
  { name: 'get', method: 'GET', path: (id) => `/api/v1/keys/${id}` },
  { name: 'update', method: 'PUT', path: (id) => `/api/v1/keys/${id}`, body: { name: 'hijacked' } },
  { name: 'suspend', method: 'POST', path: (id) => `/api/v1/keys/${id}/suspend` },
  { name: 'resume', method: 'POST', path: (id) => `/api/v1/keys/${id}/resume` },
  { name: 'cancel', method: 'DELETE', path: (id) => `/api/v1/keys/${id}` },
  { name: 'usage', method: 'GET', path: (id) => `/api/v1/keys/${id}/usage?${usageRange()}` },
];

const MUTATIONS: Call[] = [
  { name: 'create', method: 'POST', path: () => '/api/v1/keys', body: { name: 'viewer-made', dimension: '部门', model_scope: ['tsxt-general'] } },
  { name: 'update', method: 'PUT', path: (id) => `/api/v1/keys/${id}`, body: { name: 'viewer-renamed' } },
  { name: 'suspend', method: 'POST', path: (id) => `/api/v1/keys/${id}/suspend` },
  { name: 'resume', method: 'POST', path: (id) => `/api/v1/keys/${id}/resume` },
  { name: 'cancel', method: 'DELETE', path: (id) => `/api/v1/keys/${id}` },
];

const READS: Call[] = [
  { name: 'list', method: 'GET', path: () => '/api/v1/keys' },
  { name: 'get', method: 'GET', path: (id) => `/api/v1/keys/${id}` },
  { name: 'usage', method: 'GET', path: (id) => `/api/v1/keys/${id}/usage?${usageRange()}` },
  { name: 'audit-events', method: 'GET', path: () => '/api/v1/audit-events' },
];

const ids = (items: Array<{ api_key_id: string }>) => items.map((k) => k.api_key_id);

describe('REST control plane: isolation, roles and sessions', () => {
  let t: TestApp;
  let a: TestAccount;
  let b: TestAccount;
  let aKey: { api_key_id: string; name: string };
  let aSuspendedKey: { api_key_id: string; name: string };
  let bKey: { api_key_id: string };

  before(async () => {
    t = await startTestApp();
    a = await createAccount(t);
    b = await createAccount(t);
    aKey = await createKey(t, a.token, { name: 'a-only' });
    aSuspendedKey = await createKey(t, a.token, { name: 'a-suspended' });
    await api(t, 'POST', `/api/v1/keys/${aSuspendedKey.api_key_id}/suspend`, a.token);
    bKey = await createKey(t, b.token, { name: 'b-only' });
  });

  after(async () => {
    await t.close();
  });

  describe("account B on account A's key", () => {
    for (const call of KEY_CALLS) {
      it(`${call.name} → 404 key_not_found, the same answer as for a key that does not exist`, async () => {
        for (const target of [aKey, aSuspendedKey]) {
          const foreign = await api(t, call.method, call.path(target.api_key_id), b.token, call.body);
          expect(foreign.status, JSON.stringify(foreign.body)).to.equal(404);
          expect(foreign.body.error.code).to.equal('key_not_found');

          const missingId = 'key_01AAAAAAAAAAAAAAAAAAAAAAAA';
          const missing = await api(t, call.method, call.path(missingId), b.token, call.body);
          expect(missing.status).to.equal(404);
          expect(missing.body.error.code).to.equal('key_not_found');
          // Same shape and wording, only the id differs.
          expect(foreign.body.error.message.replace(target.api_key_id, '<id>')).to.equal(missing.body.error.message.replace(missingId, '<id>'));
        }
      });
    }

    it("leaves A's keys exactly as they were and writes no audit event into A", async () => {
      for (const call of KEY_CALLS) await api(t, call.method, call.path(aKey.api_key_id), b.token, call.body);
      const got = await api(t, 'GET', `/api/v1/keys/${aKey.api_key_id}`, a.token);
      expect(got.body).to.include({ name: 'a-only', status: 'active' });
      const suspended = await api(t, 'GET', `/api/v1/keys/${aSuspendedKey.api_key_id}`, a.token);
      expect(suspended.body).to.include({ name: 'a-suspended', status: 'suspended' });
      expect((await auditEventsOf(t, a.token, aKey.api_key_id)).map((e) => e.action)).to.deep.equal(['key.create']);
    });

    it('the list shows only the caller’s own keys, with every filter', async () => {
      for (const query of ['', '?status=active', '?status=suspended', '?q=only', '?dimension=%E9%83%A8%E9%97%A8', '?sort=name&order=asc']) {
        const listB = await api(t, 'GET', `/api/v1/keys${query}`, b.token);
        expect(listB.status).to.equal(200);
        expect(ids(listB.body.items), query).to.not.include.members([aKey.api_key_id, aSuspendedKey.api_key_id]);
        expect(listB.body.items.every((k: { name: string }) => !k.name.startsWith('a-')), query).to.equal(true);
      }
      const allB = await api(t, 'GET', '/api/v1/keys', b.token);
      expect(allB.body.total).to.equal(1);
      expect(ids(allB.body.items)).to.deep.equal([bKey.api_key_id]);
      const allA = await api(t, 'GET', '/api/v1/keys', a.token);
      expect(allA.body.total).to.equal(2);
      expect(ids(allA.body.items)).to.have.members([aKey.api_key_id, aSuspendedKey.api_key_id]);
    });

    it("the audit log never shows A's events to B, not even filtered by A's key id", async () => {
      const all = await api(t, 'GET', '/api/v1/audit-events?page_size=200', b.token);
      expect(all.status).to.equal(200);
      expect(all.body.items.length).to.be.greaterThan(0);
      expect(all.body.items.every((e: { api_key_id: string }) => e.api_key_id === bKey.api_key_id)).to.equal(true);
      expect(JSON.stringify(all.body)).to.not.include(a.email);

      const filtered = await api(t, 'GET', `/api/v1/audit-events?api_key_id=${aKey.api_key_id}`, b.token);
      expect(filtered.status).to.equal(200);
      expect(filtered.body.total).to.equal(0);
      expect(filtered.body.items).to.deep.equal([]);
    });
  });

  describe('a viewer of account A', () => {
    let viewer: TestAccount;
    before(async () => {
      viewer = await addUser(t, a.accountId, 'viewer');
    });

    for (const call of MUTATIONS) {
      it(`${call.name} → 403 read_only_role, and nothing changes`, async () => {
        const key = await createKey(t, a.token);
        const before = (await api(t, 'GET', `/api/v1/keys/${key.api_key_id}`, a.token)).body;
        const totalBefore = (await api(t, 'GET', '/api/v1/keys', a.token)).body.total;

        const response = await api(t, call.method, call.path(key.api_key_id), viewer.token, call.body);
        expect(response.status, JSON.stringify(response.body)).to.equal(403);
        expect(response.body.error.code).to.equal('read_only_role');

        expect((await api(t, 'GET', `/api/v1/keys/${key.api_key_id}`, a.token)).body).to.deep.equal(before);
        expect((await api(t, 'GET', '/api/v1/keys', a.token)).body.total).to.equal(totalBefore);
        expect((await auditEventsOf(t, a.token, key.api_key_id)).map((e) => e.action)).to.deep.equal(['key.create']);
      });
    }

    for (const call of READS) {
      it(`${call.name} → 200`, async () => {
        const response = await api(t, call.method, call.path(aKey.api_key_id), viewer.token);
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
      });
    }

    it('sees the same list as the owner', async () => {
      const asViewer = await api(t, 'GET', '/api/v1/keys?page_size=100', viewer.token);
      const asOwner = await api(t, 'GET', '/api/v1/keys?page_size=100', a.token);
      expect(asViewer.body).to.deep.equal(asOwner.body);
      expect(ids(asViewer.body.items)).to.include(aKey.api_key_id);
    });

    it("gets 404, not 403, for another account's key", async () => {
      const response = await api(t, 'GET', `/api/v1/keys/${bKey.api_key_id}`, viewer.token);
      expect(response.status).to.equal(404);
    });
  });

  describe('sessions', () => {
    const CALLS: Call[] = [
      { name: 'list', method: 'GET', path: () => '/api/v1/keys' },
      { name: 'get', method: 'GET', path: (id) => `/api/v1/keys/${id}` },
      { name: 'create', method: 'POST', path: () => '/api/v1/keys', body: { name: 'no-session', dimension: '部门', model_scope: ['tsxt-general'] } },
      { name: 'suspend', method: 'POST', path: (id) => `/api/v1/keys/${id}/suspend` },
      { name: 'cancel', method: 'DELETE', path: (id) => `/api/v1/keys/${id}` },
      { name: 'audit-events', method: 'GET', path: () => '/api/v1/audit-events' },
    ];

    async function expectAll401(authorization: string | undefined, what: string): Promise<void> {
      for (const call of CALLS) {
        const response = await fetch(`${t.baseUrl}${call.path(aKey.api_key_id)}`, {
          method: call.method,
          headers: {
            ...(authorization ? { authorization } : {}),
            ...(call.body ? { 'content-type': 'application/json' } : {}),
          },
          ...(call.body ? { body: JSON.stringify(call.body) } : {}),
        });
        const body = (await response.json()) as { error: { code: string; message: string } };
        expect(response.status, `${what}: ${call.name}`).to.equal(401);
        expect(body.error.code, `${what}: ${call.name}`).to.match(/session/);
      }
      // And nothing happened to the key.
      expect((await api(t, 'GET', `/api/v1/keys/${aKey.api_key_id}`, a.token)).body.status).to.equal('active');
    }

    it('no Authorization header → 401', async () => {
      await expectAll401(undefined, 'no header');
    });

    it('a made-up token → 401', async () => {
      await expectAll401('Bearer tsxs_this-is-not-a-real-session-token', 'invalid token');
    });

    it('a non-bearer scheme → 401', async () => {
      await expectAll401(`Basic ${Buffer.from(`${a.email}:${a.password}`).toString('base64')}`, 'basic auth');
    });

    it('an API key secret instead of a session token → 401', async () => {
      const key = await createKey(t, a.token);
      await expectAll401(`Bearer ${key.api_key}`, 'api key as session');
    });

    it('an expired session → 401', async () => {
      const session = await addUser(t, a.accountId, 'owner');
      expect((await api(t, 'GET', '/api/v1/keys', session.token)).status).to.equal(200);
      const { pool } = await testDatabase();
      const tokenHash = createHash('sha256').update(session.token).digest('hex');
      const updated = await pool.query(`update console_sessions set expires_at = now() - interval '1 second' where token_hash = $1`, [tokenHash]);
      expect(updated.rowCount).to.equal(1);
      await expectAll401(`Bearer ${session.token}`, 'expired session');
    });

    it('a revoked session → 401, while the same user’s other sessions keep working', async () => {
      const session = await addUser(t, a.accountId, 'admin');
      const second = await api(t, 'POST', '/api/v1/sessions', undefined, { email: session.email, password: session.password });
      expect(second.status).to.equal(201);
      const revoked = await api(t, 'DELETE', '/api/v1/sessions/current', session.token);
      expect(revoked.status).to.equal(204);
      await expectAll401(`Bearer ${session.token}`, 'revoked session');
      expect((await api(t, 'GET', '/api/v1/keys', second.body.token)).status).to.equal(200);
    });
  });
});
