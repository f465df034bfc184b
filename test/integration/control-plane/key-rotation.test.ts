// Key rotation as one action (issue 31): the successor copies the old key's
// owner fields under a new secret; the old key works through its grace and is
// then refused on every process at once (before any sweep), and the sweep run
// by every process cancels it exactly once. Grace 0 suspends it at once.
import { expect } from 'chai';
import { addUser, api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { call, requestBody } from '../../support/data-plane';
import { testDatabase } from '../../support/db';
import { eventually } from '../billing/billing-support';
import { dataOf, errorCode, gql } from '../graphql/graphql-client';
import { addDays, auditEventsOf, zoneToday } from './support';

const MODEL = 'tsxt-general';
const HOUR_MS = 3600_000;

describe('Key rotation', function () {
  this.timeout(60_000);
  let a: TestApp;
  let b: TestApp;
  let owner: TestAccount;

  before(async function () {
    // Two gateway processes on one database (migrated once per run).
    this.timeout(120_000);
    // Their own sweeps wait an hour: the tests run each pass themselves.
    const env = { GATEWAY_ROTATION_SWEEP_MS: '3600000' };
    a = await startTestApp({ env });
    b = await startTestApp({ env });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });
  beforeEach(async () => {
    owner = await createAccount(a);
  });

  const ask = (t: TestApp, secret: string) => call(t, 'messages', secret, requestBody('messages', MODEL, 'Say hello.'));
  const rotate = (t: TestApp, token: string, id: string, body?: unknown) => api(t, 'POST', `/api/v1/keys/${id}/rotate`, token, body);
  const getKey = async (t: TestApp, id: string) => (await api(t, 'GET', `/api/v1/keys/${id}`, owner.token)).body;

  /** Moves a running grace's end to `offsetMs` from now, in the database only (no NOTIFY): a short grace without waiting hours. */
  async function setGraceEnd(keyId: string, offsetMs: number): Promise<void> {
    const { pool } = await testDatabase();
    const result = await pool.query(`update api_keys set cancels_at = now() + $2 * interval '1 millisecond' where id = $1 and cancels_at is not null`, [keyId, offsetMs]);
    expect(result.rowCount).to.equal(1);
  }

  it('planned: the successor copies name, dimension, scope and expiry, its secret is shown once, and both keys work through the grace', async () => {
    const expiresAt = addDays(zoneToday('UTC'), 30);
    const old = await createKey(a, owner.token, { dimension: '成本中心', model_scope: [MODEL], expires_at: expiresAt });
    expect((await ask(a, old.api_key)).status).to.equal(200);
    const usedBefore = (await getKey(a, old.api_key_id)).used_tokens as number;
    expect(usedBefore).to.be.greaterThan(0);

    const started = Date.now();
    const rotated = await rotate(a, owner.token, old.api_key_id, { grace_hours: 6 });
    expect(rotated.status).to.equal(201);
    const next = rotated.body;
    expect(next.api_key).to.match(/^tsxt-/).and.not.equal(old.api_key);
    expect(next.api_key_id).to.not.equal(old.api_key_id);
    expect(next).to.include({ name: old.name, dimension: '成本中心', expires_at: expiresAt, status: 'active', rotated_from: old.api_key_id, rotated_to: null, cancels_at: null, used_tokens: 0 });
    expect(next.model_scope).to.deep.equal([MODEL]);

    const previous = await getKey(a, old.api_key_id);
    expect(previous).to.include({ status: 'active', rotated_to: next.api_key_id, rotated_from: null });
    expect(previous).to.not.have.property('api_key');
    const cancelsAt = Date.parse(previous.cancels_at as string);
    expect(cancelsAt - started).to.be.within(6 * HOUR_MS - 5_000, 6 * HOUR_MS + 5_000);

    // Both keys work on every process while the grace runs; each call is metered on its own key.
    for (const t of [a, b]) {
      expect((await ask(t, old.api_key)).status).to.equal(200);
      expect((await ask(t, next.api_key)).status).to.equal(200);
    }
    const [oldAfter, nextAfter] = [await getKey(a, old.api_key_id), await getKey(a, next.api_key_id)];
    expect(oldAfter.used_tokens).to.be.greaterThan(usedBefore);
    expect(nextAfter.used_tokens).to.be.greaterThan(0);
    expect(oldAfter.last_used_at).to.be.a('string');

    // The list shows both keys under one name; the name stays taken.
    const list = await api(a, 'GET', `/api/v1/keys?q=${encodeURIComponent(old.name as string)}`, owner.token);
    expect(list.body.items.map((k: { api_key_id: string }) => k.api_key_id)).to.have.members([old.api_key_id, next.api_key_id]);
    expect((await api(a, 'POST', '/api/v1/keys', owner.token, { name: old.name, dimension: '部门', model_scope: [MODEL] })).body.error.code).to.equal('name_taken');

    const oldAudit = await auditEventsOf(a, owner.token, old.api_key_id);
    const rotation = oldAudit.find((e) => e.action === 'key.rotate');
    expect(rotation?.changes).to.deep.include({ rotated_to: { from: null, to: next.api_key_id }, cancels_at: { from: null, to: previous.cancels_at }, grace_hours: { from: null, to: 6 } });
    expect(rotation?.actor).to.equal(owner.email);
    const created = (await auditEventsOf(a, owner.token, next.api_key_id)).find((e) => e.action === 'key.create');
    expect(created?.changes.rotated_from).to.deep.equal({ from: null, to: old.api_key_id });
  });

  it('the default grace is 24 hours', async () => {
    const old = await createKey(a, owner.token);
    const started = Date.now();
    expect((await rotate(a, owner.token, old.api_key_id)).status).to.equal(201);
    const cancelsAt = Date.parse((await getKey(a, old.api_key_id)).cancels_at as string);
    expect(cancelsAt - started).to.be.within(24 * HOUR_MS - 5_000, 24 * HOUR_MS + 5_000);
  });

  it('grace expiry: every process refuses the old key the moment cancels_at passes, and the sweep on every process cancels it once', async () => {
    const old = await createKey(a, owner.token);
    const next = (await rotate(a, owner.token, old.api_key_id, { grace_hours: 1 })).body;
    // A grace of two seconds; both processes then cache the old key, which still works.
    await setGraceEnd(old.api_key_id, 2_000);
    const graceEnds = Date.parse((await getKey(a, old.api_key_id)).cancels_at as string);
    for (const t of [a, b]) expect((await ask(t, old.api_key)).status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, graceEnds - Date.now()) + 50));

    // The grace has ended; no sweep has run and nothing was notified: refused everywhere at once, from the cache.
    for (const t of [a, b]) {
      const refused = await ask(t, old.api_key);
      expect(refused.status).to.equal(401);
      expect(refused.body.error.type).to.equal('authentication_error');
      expect((await ask(t, next.api_key)).status).to.equal(200);
    }
    expect(await getKey(a, old.api_key_id)).to.include({ status: 'cancelled', rotated_to: next.api_key_id });
    expect((await api(a, 'GET', '/api/v1/keys?status=cancelled&page_size=100', owner.token)).body.items.map((k: { api_key_id: string }) => k.api_key_id)).to.include(old.api_key_id);
    expect((await api(a, 'GET', '/api/v1/keys?status=active&page_size=100', owner.token)).body.items.map((k: { api_key_id: string }) => k.api_key_id)).to.not.include(old.api_key_id);

    const { pool } = await testDatabase();
    const storedStatus = async () => (await pool.query<{ status: string }>('select status from api_keys where id = $1', [old.api_key_id])).rows[0]?.status;
    expect(await storedStatus()).to.equal('active');
    // Both processes sweep at once: the key is cancelled by exactly one of them.
    const counts = await Promise.all([a.app.services.rotationSweep.run(), b.app.services.rotationSweep.run()]);
    const stored = await pool.query<{ status: string; cancelled_at: Date | null }>('select status, cancelled_at from api_keys where id = $1', [old.api_key_id]);
    expect(stored.rows[0]).to.include({ status: 'cancelled' });
    expect(stored.rows[0]?.cancelled_at).to.be.an.instanceOf(Date);
    expect(counts.filter((n) => n > 0)).to.have.length(1);
    expect(await b.app.services.rotationSweep.run()).to.equal(0);
    const cancels = (await auditEventsOf(a, owner.token, old.api_key_id)).filter((e) => e.action === 'key.cancel');
    expect(cancels).to.have.length(1);
    expect(cancels[0]).to.include({ actor: 'key-rotation', actor_user_id: null });
    expect(cancels[0]?.changes).to.deep.equal({ status: { from: 'active', to: 'cancelled' }, reason: { from: null, to: 'rotation_grace_ended' } });

    for (const t of [a, b]) {
      expect((await ask(t, old.api_key)).status).to.equal(401);
      expect((await ask(t, next.api_key)).status).to.equal(200);
    }
    // The old key's usage history stays its own.
    expect((await getKey(a, old.api_key_id)).used_tokens).to.be.greaterThan(0);
  });

  it('emergency (grace 0): the old key is suspended at once on every process and stays suspended', async () => {
    const old = await createKey(a, owner.token);
    for (const t of [a, b]) expect((await ask(t, old.api_key)).status).to.equal(200);

    const rotated = await rotate(a, owner.token, old.api_key_id, { grace_hours: 0 });
    expect(rotated.status).to.equal(201);
    const refusedOnA = await ask(a, old.api_key);
    expect(refusedOnA.status).to.equal(403);
    expect(refusedOnA.body.error.type).to.equal('permission_error');
    await eventually(async () => expect((await ask(b, old.api_key)).status).to.equal(403), 3000, 20);
    for (const t of [a, b]) expect((await ask(t, rotated.body.api_key)).status).to.equal(200);

    expect(await getKey(a, old.api_key_id)).to.include({ status: 'suspended', suspended_reason: 'owner', rotated_to: rotated.body.api_key_id, cancels_at: null });
    const rotation = (await auditEventsOf(a, owner.token, old.api_key_id)).find((e) => e.action === 'key.rotate');
    expect(rotation?.changes).to.deep.include({ status: { from: 'active', to: 'suspended' }, suspended_reason: { from: null, to: 'owner' }, grace_hours: { from: null, to: 0 } });
    // Nothing for the sweep to do: an emergency-rotated key has no grace to end.
    await a.app.services.rotationSweep.run();
    expect((await getKey(a, old.api_key_id)).status).to.equal('suspended');
  });

  it('a cancelled key, a key whose grace has ended and a key already rotated cannot be rotated (409)', async () => {
    const cancelled = await createKey(a, owner.token);
    await api(a, 'DELETE', `/api/v1/keys/${cancelled.api_key_id}`, owner.token);
    const refused = await rotate(a, owner.token, cancelled.api_key_id, { grace_hours: 1 });
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('key_cancelled');

    const rotatedOnce = await createKey(a, owner.token);
    const next = (await rotate(a, owner.token, rotatedOnce.api_key_id, { grace_hours: 1 })).body;
    const again = await rotate(a, owner.token, rotatedOnce.api_key_id, { grace_hours: 1 });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('key_rotated');
    await setGraceEnd(rotatedOnce.api_key_id, -1_000);
    expect((await rotate(a, owner.token, rotatedOnce.api_key_id)).body.error.code).to.equal('key_cancelled');
    // The successor can itself be rotated: a chain of links.
    const third = await rotate(a, owner.token, next.api_key_id, { grace_hours: 1 });
    expect(third.status).to.equal(201);
    expect(third.body.rotated_from).to.equal(next.api_key_id);
  });

  it('RBAC and isolation: viewers cannot rotate, another account sees 404, no session is 401; nothing changes', async () => {
    const key = await createKey(a, owner.token);
    const viewer = await addUser(a, owner.accountId, 'viewer');
    const admin = await addUser(a, owner.accountId, 'admin');
    const stranger = await createAccount(a);
    const asViewer = await rotate(a, viewer.token, key.api_key_id, { grace_hours: 1 });
    expect(asViewer.status).to.equal(403);
    expect(asViewer.body.error.code).to.equal('read_only_role');
    const asStranger = await rotate(a, stranger.token, key.api_key_id, { grace_hours: 1 });
    expect(asStranger.status).to.equal(404);
    expect(asStranger.body.error.code).to.equal('key_not_found');
    expect((await rotate(a, '', key.api_key_id, { grace_hours: 1 })).status).to.equal(401);
    expect(await getKey(a, key.api_key_id)).to.include({ rotated_to: null, cancels_at: null, status: 'active' });
    expect((await rotate(a, admin.token, key.api_key_id, { grace_hours: 1 })).status).to.equal(201);
  });

  it('refuses a bad grace_hours with 400 naming the field', async () => {
    const key = await createKey(a, owner.token);
    for (const graceHours of [-1, 1.5, 721, '2', true]) {
      const response = await rotate(a, owner.token, key.api_key_id, { grace_hours: graceHours });
      expect(response.status, JSON.stringify(graceHours)).to.equal(400);
      expect(response.body.error.field ?? response.body.error.message).to.include('grace_hours');
    }
    const unknown = await rotate(a, owner.token, key.api_key_id, { grace: 2 });
    expect(unknown.status).to.equal(400);
    expect(await getKey(a, key.api_key_id)).to.include({ rotated_to: null });
  });

  it('GraphQL rotateApiKey answers the successor with its secret and the old key with its links', async () => {
    const key = await createKey(a, owner.token);
    const mutation = `mutation($id: ID!, $input: RotateApiKeyInput) { rotateApiKey(id: $id, input: $input) {
      secret apiKey { id name status rotatedFrom rotatedTo cancelsAt } previous { id status rotatedTo cancelsAt } } }`;
    const result = dataOf(await gql(a, mutation, { id: key.api_key_id, input: { graceHours: 2 } }, owner.token)).rotateApiKey;
    expect(result.secret).to.match(/^tsxt-/);
    expect(result.apiKey).to.include({ name: key.name, status: 'active', rotatedFrom: key.api_key_id, rotatedTo: null, cancelsAt: null });
    expect(result.previous).to.include({ id: key.api_key_id, status: 'active', rotatedTo: result.apiKey.id });
    expect(Date.parse(result.previous.cancelsAt as string) - Date.now()).to.be.within(2 * HOUR_MS - 10_000, 2 * HOUR_MS);
    expect((await ask(a, result.secret as string)).status).to.equal(200);
    expect(errorCode(await gql(a, mutation, { id: key.api_key_id }, owner.token))).to.equal('key_rotated');
    const viewer = await addUser(a, owner.accountId, 'viewer');
    const other = await createKey(a, owner.token);
    expect(errorCode(await gql(a, mutation, { id: other.api_key_id }, viewer.token))).to.equal('read_only_role');
  });
});
