// The key state machine (docs/architecture.md §14) as a table: every state × every operation
// → HTTP status, the state the key reads afterwards, and the audit event the
// change wrote (or that an idempotent no-op wrote none).
import { expect } from 'chai';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { addDays, auditEventsOf, setExpiresAt, zoneToday } from './support';

type State = 'active' | 'suspended' | 'cancelled' | 'expired' | 'suspended after its expiry passed';
type Operation = 'suspend' | 'resume' | 'cancel' | 'update name' | 'update expires_at to a future date';
type Reads = { status: 'active' | 'suspended' | 'cancelled' | 'expired'; reason: 'owner' | 'credit_limit' | null };

interface KeyBefore {
  id: string;
  name: string;
  expiresAt: string | null;
}

interface OperationInput {
  newName: string;
  newExpiresAt: string;
}

type ExpectedChanges = (before: KeyBefore, input: OperationInput) => Record<string, { from: unknown; to: unknown }>;

type Outcome =
  | { http: 200; reads: Reads; audit: { action: string; changes: ExpectedChanges } | null }
  | { http: 409; code: string };

const ZONE = 'UTC';
const today = () => zoneToday(ZONE);

const ACTIVE: Reads = { status: 'active', reason: null };
const SUSPENDED: Reads = { status: 'suspended', reason: 'owner' };
const CANCELLED: Reads = { status: 'cancelled', reason: null };
const EXPIRED: Reads = { status: 'expired', reason: null };

const status =
  (from: Reads, to: Reads): ExpectedChanges =>
  () => ({
    status: { from: from.status, to: to.status },
    ...(from.reason !== to.reason ? { suspended_reason: { from: from.reason, to: to.reason } } : {}),
  });
const renamed: ExpectedChanges = (before, input) => ({ name: { from: before.name, to: input.newName } });
const extended: ExpectedChanges = (before, input) => ({ expires_at: { from: before.expiresAt, to: input.newExpiresAt } });

const ok = (reads: Reads, audit: { action: string; changes: ExpectedChanges } | null): Outcome => ({ http: 200, reads, audit });
const noOp = (reads: Reads): Outcome => ({ http: 200, reads, audit: null });
const cancelledConflict: Outcome = { http: 409, code: 'key_cancelled' };

const TABLE: Record<State, { initially: Reads; outcomes: Record<Operation, Outcome> }> = {
  active: {
    initially: ACTIVE,
    outcomes: {
      suspend: ok(SUSPENDED, { action: 'key.suspend', changes: status(ACTIVE, SUSPENDED) }),
      resume: noOp(ACTIVE),
      cancel: ok(CANCELLED, { action: 'key.cancel', changes: status(ACTIVE, CANCELLED) }),
      'update name': ok(ACTIVE, { action: 'key.update', changes: renamed }),
      'update expires_at to a future date': ok(ACTIVE, { action: 'key.update', changes: extended }),
    },
  },
  suspended: {
    initially: SUSPENDED,
    outcomes: {
      suspend: noOp(SUSPENDED),
      resume: ok(ACTIVE, { action: 'key.resume', changes: status(SUSPENDED, ACTIVE) }),
      cancel: ok(CANCELLED, { action: 'key.cancel', changes: status(SUSPENDED, CANCELLED) }),
      'update name': ok(SUSPENDED, { action: 'key.update', changes: renamed }),
      'update expires_at to a future date': ok(SUSPENDED, { action: 'key.update', changes: extended }),
    },
  },
  cancelled: {
    initially: CANCELLED,
    outcomes: {
      suspend: cancelledConflict,
      resume: cancelledConflict,
      cancel: noOp(CANCELLED),
      'update name': cancelledConflict,
      'update expires_at to a future date': cancelledConflict,
    },
  },
  expired: {
    initially: EXPIRED,
    outcomes: {
      // An owner suspension is explicit and wins over expiry.
      suspend: ok(SUSPENDED, { action: 'key.suspend', changes: status(EXPIRED, SUSPENDED) }),
      // Nothing to resume: the key is not suspended, so it stays expired.
      resume: noOp(EXPIRED),
      cancel: ok(CANCELLED, { action: 'key.cancel', changes: status(EXPIRED, CANCELLED) }),
      'update name': ok(EXPIRED, { action: 'key.update', changes: renamed }),
      // A future expiry revives an expired key.
      'update expires_at to a future date': ok(ACTIVE, { action: 'key.update', changes: extended }),
    },
  },
  'suspended after its expiry passed': {
    initially: SUSPENDED,
    outcomes: {
      suspend: noOp(SUSPENDED),
      // Resuming a key whose expiry passed lands in expired, not active.
      resume: ok(EXPIRED, { action: 'key.resume', changes: status(SUSPENDED, EXPIRED) }),
      cancel: ok(CANCELLED, { action: 'key.cancel', changes: status(SUSPENDED, CANCELLED) }),
      'update name': ok(SUSPENDED, { action: 'key.update', changes: renamed }),
      'update expires_at to a future date': ok(SUSPENDED, { action: 'key.update', changes: extended }),
    },
  },
};

describe('REST control plane: key state machine', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t, { timezone: ZONE });
  });

  after(async () => {
    await t.close();
  });

  async function keyIn(state: State): Promise<KeyBefore> {
    const expiring = state === 'expired' || state === 'suspended after its expiry passed';
    const created = await createKey(t, owner.token, expiring ? { expires_at: today() } : {});
    const id = created.api_key_id as string;
    if (state === 'suspended' || state === 'suspended after its expiry passed') {
      expect((await api(t, 'POST', `/api/v1/keys/${id}/suspend`, owner.token)).status).to.equal(200);
    }
    if (state === 'cancelled') expect((await api(t, 'DELETE', `/api/v1/keys/${id}`, owner.token)).status).to.equal(200);
    // The API refuses a past expiry, so move it into the past directly.
    if (expiring) await setExpiresAt(id, addDays(today(), -1));
    const current = await api(t, 'GET', `/api/v1/keys/${id}`, owner.token);
    return { id, name: current.body.name, expiresAt: current.body.expires_at };
  }

  function perform(operation: Operation, id: string, input: OperationInput) {
    switch (operation) {
      case 'suspend':
        return api(t, 'POST', `/api/v1/keys/${id}/suspend`, owner.token);
      case 'resume':
        return api(t, 'POST', `/api/v1/keys/${id}/resume`, owner.token);
      case 'cancel':
        return api(t, 'DELETE', `/api/v1/keys/${id}`, owner.token);
      case 'update name':
        return api(t, 'PUT', `/api/v1/keys/${id}`, owner.token, { name: input.newName });
      case 'update expires_at to a future date':
        return api(t, 'PUT', `/api/v1/keys/${id}`, owner.token, { expires_at: input.newExpiresAt });
    }
  }

  for (const [state, row] of Object.entries(TABLE) as Array<[State, (typeof TABLE)[State]]>) {
    describe(`a key that is ${state}`, () => {
      it(`reads ${row.initially.status} (suspended_reason ${row.initially.reason})`, async () => {
        const key = await keyIn(state);
        const got = await api(t, 'GET', `/api/v1/keys/${key.id}`, owner.token);
        expect(got.status).to.equal(200);
        expect({ status: got.body.status, reason: got.body.suspended_reason }).to.deep.equal(row.initially);
      });

      for (const [operation, outcome] of Object.entries(row.outcomes) as Array<[Operation, Outcome]>) {
        const label =
          outcome.http === 409
            ? `${operation} → 409 ${outcome.code}`
            : `${operation} → 200 ${outcome.reads.status}${outcome.reads.reason ? ` (${outcome.reads.reason})` : ''}, ${outcome.audit ? `audited as ${outcome.audit.action}` : 'no audit event'}`;

        it(label, async () => {
          const key = await keyIn(state);
          const input: OperationInput = { newName: `renamed-${key.id.slice(-8)}`, newExpiresAt: addDays(today(), 30) };
          const eventsBefore = await auditEventsOf(t, owner.token, key.id);

          const response = await perform(operation, key.id, input);
          const after = await api(t, 'GET', `/api/v1/keys/${key.id}`, owner.token);
          const eventsAfter = await auditEventsOf(t, owner.token, key.id);

          if (outcome.http === 409) {
            expect(response.status, JSON.stringify(response.body)).to.equal(409);
            expect(response.body.error.code).to.equal(outcome.code);
            expect(response.body.error.message).to.be.a('string').with.length.greaterThan(0);
            // Nothing changed and nothing was audited.
            expect(after.body.status).to.equal(row.initially.status);
            expect(after.body.name).to.equal(key.name);
            expect(after.body.expires_at).to.equal(key.expiresAt);
            expect(eventsAfter).to.deep.equal(eventsBefore);
            return;
          }

          expect(response.status, JSON.stringify(response.body)).to.equal(200);
          expect(response.body).to.not.have.property('api_key');
          for (const shown of [response.body, after.body]) {
            expect(shown.api_key_id).to.equal(key.id);
            expect({ status: shown.status, reason: shown.suspended_reason }).to.deep.equal(outcome.reads);
          }
          if (operation === 'update name') expect(after.body.name).to.equal(input.newName);
          if (operation === 'update expires_at to a future date') expect(after.body.expires_at).to.equal(input.newExpiresAt);

          if (outcome.audit === null) {
            expect(eventsAfter, 'an idempotent no-op must not write an audit event').to.deep.equal(eventsBefore);
            return;
          }
          expect(eventsAfter).to.have.length(eventsBefore.length + 1);
          const event = eventsAfter[0]!;
          expect(event.action).to.equal(outcome.audit.action);
          expect(event.api_key_id).to.equal(key.id);
          expect(event.actor).to.equal(owner.email);
          expect(event.actor_user_id).to.be.a('string');
          expect(event.ip).to.equal('127.0.0.1');
          expect(event.changes).to.deep.equal(outcome.audit.changes(key, input));
          expect(Date.parse(event.created_at)).to.be.closeTo(Date.now(), 60_000);
        });
      }
    });
  }

  it('an expired key revived by a future expires_at answers as active in the status filter too', async () => {
    const key = await keyIn('expired');
    const expiredBefore = await api(t, 'GET', '/api/v1/keys?status=expired&page_size=100', owner.token);
    expect(expiredBefore.body.items.map((k: { api_key_id: string }) => k.api_key_id)).to.include(key.id);

    const revived = await api(t, 'PUT', `/api/v1/keys/${key.id}`, owner.token, { expires_at: addDays(today(), 1) });
    expect(revived.status).to.equal(200);

    const active = await api(t, 'GET', '/api/v1/keys?status=active&page_size=100', owner.token);
    const expired = await api(t, 'GET', '/api/v1/keys?status=expired&page_size=100', owner.token);
    expect(active.body.items.map((k: { api_key_id: string }) => k.api_key_id)).to.include(key.id);
    expect(expired.body.items.map((k: { api_key_id: string }) => k.api_key_id)).to.not.include(key.id);
  });

  it('a suspended key whose expiry passed, extended and resumed, is active again', async () => {
    const key = await keyIn('suspended after its expiry passed');
    expect((await api(t, 'PUT', `/api/v1/keys/${key.id}`, owner.token, { expires_at: null })).body.status).to.equal('suspended');
    const resumed = await api(t, 'POST', `/api/v1/keys/${key.id}/resume`, owner.token);
    expect(resumed.status).to.equal(200);
    expect(resumed.body).to.include({ status: 'active', suspended_reason: null, expires_at: null });
  });

  it('the audit trail of one key lists create, update, suspend, resume and cancel newest first, with the actor of each', async () => {
    const admin = await createAccount(t, { role: 'admin' });
    const created = await createKey(t, admin.token, { name: 'audited-key' });
    const id = created.api_key_id as string;
    await api(t, 'PUT', `/api/v1/keys/${id}`, admin.token, { dimension: '成本中心' });
    await api(t, 'POST', `/api/v1/keys/${id}/suspend`, admin.token);
    await api(t, 'POST', `/api/v1/keys/${id}/suspend`, admin.token); // no-op
    await api(t, 'POST', `/api/v1/keys/${id}/resume`, admin.token);
    await api(t, 'DELETE', `/api/v1/keys/${id}`, admin.token);
    await api(t, 'DELETE', `/api/v1/keys/${id}`, admin.token); // no-op

    const events = await auditEventsOf(t, admin.token, id);
    expect(events.map((e) => e.action)).to.deep.equal(['key.cancel', 'key.resume', 'key.suspend', 'key.update', 'key.create']);
    expect(events.every((e) => e.actor === admin.email && e.ip === '127.0.0.1' && e.api_key_id === id)).to.equal(true);
    expect(events[3]!.changes).to.deep.equal({ dimension: { from: '部门', to: '成本中心' } });
    expect(events[4]!.changes).to.include.keys('name', 'dimension', 'model_scope');
    expect(events[4]!.changes.name).to.deep.equal({ from: null, to: 'audited-key' });
  });
});
