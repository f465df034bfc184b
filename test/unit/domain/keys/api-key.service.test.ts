// The key service over in-memory tables: what an owner sees when creating,
// changing, suspending, resuming, cancelling and listing keys; validation
// naming the field; audit events and change notices only for what committed;
// another account's key is not found.
import { expect } from 'chai';
import { CHANNELS } from '../../../../src/db/change-feed';
import type { AppError } from '../../../../src/errors';
import { hashSecret } from '../../../../src/domain/keys/key-secret';
import { rejection } from '../../../support/memory/transactor';
import { actor, dayFromToday, keysWorld, newKey } from './world';

const A = actor('acc_a');
const B = actor('acc_b');
const LIMIT = { requests_per_minute: 60, tokens_per_minute: null, concurrent_requests: 4 };

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  return (await rejection(promise)) as AppError;
}

describe('ApiKeyService (in-memory repository)', () => {
  let w: ReturnType<typeof keysWorld>;

  beforeEach(() => {
    w = keysWorld();
  });

  describe('create', () => {
    it('answers the secret once, stores only its hash, writes key.create and notifies after the commit', async () => {
      const created = await w.keys.create(A, newKey({ expiresAt: dayFromToday(3), rateLimit: LIMIT }));
      expect(created.secret).to.match(/^tsxt-[0-9A-Za-z]{46}$/);
      expect(created.key).to.include({ name: 'report-bot', dimension: '部门', status: 'active', suspendedReason: null, usedTokens: 0, rotatedFrom: null });
      expect(created.key.secretHint).to.equal(`${created.secret.slice(0, 9)}…${created.secret.slice(-4)}`);
      const stored = w.rows.rows.get(created.key.id)!;
      expect(stored.secretHash).to.equal(hashSecret(created.secret));
      expect(JSON.stringify(stored)).to.not.include(created.secret);
      const [event] = w.events.of('key.create');
      expect(event).to.include({ apiKeyId: created.key.id, actor: A.label, ip: A.ip });
      expect(event!.changes).to.deep.equal({
        name: { from: null, to: 'report-bot' },
        dimension: { from: null, to: '部门' },
        model_scope: { from: null, to: ['tsxt-general'] },
        expires_at: { from: null, to: dayFromToday(3) },
        rate_limit: { from: null, to: LIMIT },
      });
      expect(w.tx.notices).to.deep.equal([{ channel: CHANNELS.keys, id: created.key.id }]);
      expect(w.committed).to.deep.equal([created.key.id]);
    });

    it('trims the name, drops repeated models, and takes expiry today as the last valid day', async () => {
      const { key } = await w.keys.create(A, newKey({ name: '  财务报表助手 ', modelScope: ['tsxt-coder', 'tsxt-general', 'tsxt-coder'], expiresAt: dayFromToday(0) }));
      expect(key).to.include({ name: '财务报表助手', status: 'active', expiresAt: dayFromToday(0) });
      expect(key.modelScope).to.deep.equal(['tsxt-coder', 'tsxt-general']);
    });

    it('gives a key created without a rate limit the account default; null means none', async () => {
      w.accounts.defaults.set('acc_a', LIMIT);
      const plain = await w.keys.create(A, newKey({ name: 'plain' }));
      expect(plain.key.rateLimit).to.deep.equal(LIMIT);
      expect(w.events.of('key.create')[0]!.changes.rate_limit).to.deep.equal({ from: null, to: LIMIT });
      const none = await w.keys.create(A, newKey({ name: 'none', rateLimit: null }));
      expect(none.key.rateLimit).to.equal(null);
      const own = await w.keys.create(A, newKey({ name: 'own', rateLimit: { requests_per_minute: null, tokens_per_minute: 1000, concurrent_requests: null } }));
      expect(own.key.rateLimit).to.deep.equal({ requests_per_minute: null, tokens_per_minute: 1000, concurrent_requests: null });
    });

    it('a rate limit of only null budgets is no limit', async () => {
      const { key } = await w.keys.create(A, newKey({ rateLimit: { requests_per_minute: null, tokens_per_minute: null, concurrent_requests: null } }));
      expect(key.rateLimit).to.equal(null);
    });

    const invalid: Array<[string, Parameters<typeof newKey>[0], string, RegExp?]> = [
      ['an empty name', { name: '' }, 'name'],
      ['a name of spaces', { name: '   ' }, 'name'],
      ['a name of 65 characters', { name: '名'.repeat(65) }, 'name', /64/],
      ['an unknown dimension', { dimension: 'department' }, 'dimension', /部门, 业务线, 成本中心/],
      ['an empty model scope', { modelScope: [] }, 'model_scope'],
      ['an unknown model', { modelScope: ['tsxt-general', 'gpt-nonexistent'] }, 'model_scope', /gpt-nonexistent.*tsxt-general, tsxt-coder, tsxt-lite/],
      ['a date that does not exist', { expiresAt: '2026-02-30' }, 'expires_at'],
      ['a timestamp for expiry', { expiresAt: `${dayFromToday(2)}T00:00:00Z` }, 'expires_at'],
      ['yesterday in the account zone', { expiresAt: dayFromToday(-1) }, 'expires_at', new RegExp(dayFromToday(0))],
      ['a zero budget', { rateLimit: { requests_per_minute: 0, tokens_per_minute: null, concurrent_requests: null } }, 'rate_limit.requests_per_minute'],
      ['a fractional budget', { rateLimit: { requests_per_minute: null, tokens_per_minute: 1.5, concurrent_requests: null } }, 'rate_limit.tokens_per_minute'],
    ];
    for (const [title, fields, field, message] of invalid) {
      it(`${title} → 400 naming ${field}; nothing written, audited or notified`, async () => {
        const error = await refusal(w.keys.create(A, newKey(fields)));
        expect(error).to.include({ status: 400, field });
        expect(error.message).to.include(field.split('.')[0]);
        if (message) expect(error.message).to.match(message);
        expect(w.rows.all()).to.have.length(0);
        expect(w.events.all()).to.have.length(0);
        expect(w.tx.notices).to.have.length(0);
      });
    }

    it('a viewer may not create a key (403 read_only_role)', async () => {
      const error = await refusal(w.keys.create(actor('acc_a', 'viewer'), newKey()));
      expect(error).to.include({ status: 403, code: 'read_only_role' });
      expect(w.rows.all()).to.have.length(0);
    });
  });

  describe('names', () => {
    it('are unique among the account’s live keys (409 name_taken), free in another account and after a cancel', async () => {
      const first = await w.keys.create(A, newKey({ name: 'shared' }));
      const error = await refusal(w.keys.create(A, newKey({ name: 'shared' })));
      expect(error).to.include({ status: 409, code: 'name_taken', field: 'name' });
      expect(w.rows.all()).to.have.length(1);
      await w.keys.create(B, newKey({ name: 'shared' }));
      await w.keys.cancel(A, first.key.id);
      const again = await w.keys.create(A, newKey({ name: 'shared' }));
      expect(again.key.id).to.not.equal(first.key.id);
    });

    it('a name taken between the check and the write is 409 name_taken, and the unit of work leaves nothing', async () => {
      await w.keys.create(A, newKey({ name: 'raced' }));
      // As if a concurrent create committed after this one's check: the unique index answers.
      w.rows.nameInUse = async () => false;
      const error = await refusal(w.keys.create(A, newKey({ name: 'raced' })));
      expect(error).to.include({ status: 409, code: 'name_taken', field: 'name' });
      expect(w.rows.all()).to.have.length(1);
      expect(w.events.of('key.create')).to.have.length(1);
      expect(w.tx.rollbacks).to.equal(1);
    });

    it('renaming to a live key’s name is refused; to its own name or a cancelled key’s, allowed', async () => {
      const one = await w.keys.create(A, newKey({ name: 'one' }));
      const two = await w.keys.create(A, newKey({ name: 'two' }));
      expect(await refusal(w.keys.update(A, two.key.id, { name: 'one' }))).to.include({ status: 409, code: 'name_taken' });
      expect((await w.keys.update(A, two.key.id, { name: 'two' })).name).to.equal('two');
      await w.keys.cancel(A, one.key.id);
      expect((await w.keys.update(A, two.key.id, { name: 'one' })).name).to.equal('one');
    });
  });

  describe('update', () => {
    it('changes the fields given, audits exactly what changed and notifies', async () => {
      const { key } = await w.keys.create(A, newKey({ expiresAt: dayFromToday(5), rateLimit: LIMIT }));
      const updated = await w.keys.update(A, key.id, { name: 'renamed', modelScope: ['tsxt-general', 'tsxt-lite'], expiresAt: null, rateLimit: null });
      expect(updated).to.include({ name: 'renamed', dimension: '部门', expiresAt: null, rateLimit: null });
      expect(updated.modelScope).to.deep.equal(['tsxt-general', 'tsxt-lite']);
      expect(await w.keys.get(A, key.id)).to.deep.equal(updated);
      const [event] = w.events.of('key.update');
      expect(event!.changes).to.deep.equal({
        name: { from: 'report-bot', to: 'renamed' },
        model_scope: { from: ['tsxt-general'], to: ['tsxt-general', 'tsxt-lite'] },
        expires_at: { from: dayFromToday(5), to: null },
        rate_limit: { from: LIMIT, to: null },
      });
      expect(w.tx.notices.map((n) => n.id)).to.deep.equal([key.id, key.id]);
    });

    it('an update that changes nothing writes no audit event', async () => {
      const { key } = await w.keys.create(A, newKey());
      await w.keys.update(A, key.id, { name: 'report-bot', dimension: '部门' });
      expect(w.events.of('key.update')).to.have.length(0);
    });

    it('an empty update is 400 naming body; an invalid field is 400 naming it and changes nothing', async () => {
      const { key } = await w.keys.create(A, newKey());
      expect(await refusal(w.keys.update(A, key.id, {}))).to.include({ status: 400, field: 'body' });
      expect(await refusal(w.keys.update(A, key.id, { name: 'ok', dimension: '部' }))).to.include({ status: 400, field: 'dimension' });
      expect((await w.keys.get(A, key.id)).name).to.equal('report-bot');
    });

    it('moving expires_at into the future revives an expired key', async () => {
      const { key } = await w.keys.create(A, newKey());
      w.rows.rows.get(key.id)!.expiresAt = dayFromToday(-2);
      expect((await w.keys.get(A, key.id)).status).to.equal('expired');
      expect((await w.keys.update(A, key.id, { expiresAt: dayFromToday(1) })).status).to.equal('active');
    });

    it('a cancelled key cannot be updated (409 key_cancelled)', async () => {
      const { key } = await w.keys.create(A, newKey());
      await w.keys.cancel(A, key.id);
      expect(await refusal(w.keys.update(A, key.id, { name: 'late' }))).to.include({ status: 409, code: 'key_cancelled' });
    });
  });

  describe('state transitions', () => {
    it('suspend, resume and cancel move the key and audit each change once; repeating one is idempotent', async () => {
      const { key } = await w.keys.create(A, newKey());
      expect(await w.keys.suspend(A, key.id)).to.include({ status: 'suspended', suspendedReason: 'owner' });
      expect(await w.keys.suspend(A, key.id)).to.include({ status: 'suspended' });
      expect(w.events.of('key.suspend')).to.have.length(1);
      expect(w.events.of('key.suspend')[0]!.changes).to.deep.equal({
        status: { from: 'active', to: 'suspended' },
        suspended_reason: { from: null, to: 'owner' },
      });
      expect(await w.keys.resume(A, key.id)).to.include({ status: 'active', suspendedReason: null });
      expect(await w.keys.resume(A, key.id)).to.include({ status: 'active' });
      expect(w.events.of('key.resume')).to.have.length(1);
      expect(await w.keys.cancel(A, key.id)).to.include({ status: 'cancelled' });
      expect(w.rows.rows.get(key.id)!.cancelledAt).to.be.instanceOf(Date);
      await w.keys.cancel(A, key.id);
      expect(w.events.of('key.cancel')).to.have.length(1);
      expect(w.rows.locks).to.include(key.id);
    });

    it('a cancelled key cannot be suspended or resumed (409 key_cancelled)', async () => {
      const { key } = await w.keys.create(A, newKey());
      await w.keys.cancel(A, key.id);
      expect(await refusal(w.keys.suspend(A, key.id))).to.include({ status: 409, code: 'key_cancelled' });
      expect(await refusal(w.keys.resume(A, key.id))).to.include({ status: 409, code: 'key_cancelled' });
    });

    it('an expired key resumes into expired, and the audit shows the states the console showed', async () => {
      const { key } = await w.keys.create(A, newKey());
      await w.keys.suspend(A, key.id);
      w.rows.rows.get(key.id)!.expiresAt = dayFromToday(-1);
      expect(await w.keys.resume(A, key.id)).to.include({ status: 'expired', suspendedReason: null });
      expect(w.events.of('key.resume')[0]!.changes).to.deep.equal({
        status: { from: 'suspended', to: 'expired' },
        suspended_reason: { from: 'owner', to: null },
      });
    });

    it('a key suspended by the credit limit cannot be resumed by its owner (409 credit_limit_reached)', async () => {
      const { key } = await w.keys.create(A, newKey());
      w.overLimit.add('acc_a');
      expect(await w.keys.get(A, key.id)).to.include({ status: 'suspended', suspendedReason: 'credit_limit' });
      expect(await refusal(w.keys.resume(A, key.id))).to.include({ status: 409, code: 'credit_limit_reached' });
    });

    it('a viewer may not change a key', async () => {
      const { key } = await w.keys.create(A, newKey());
      const viewer = actor('acc_a', 'viewer');
      for (const change of [() => w.keys.suspend(viewer, key.id), () => w.keys.cancel(viewer, key.id), () => w.keys.update(viewer, key.id, { name: 'x' })]) {
        expect(await refusal(change())).to.include({ status: 403, code: 'read_only_role' });
      }
      expect((await w.keys.get(A, key.id)).status).to.equal('active');
    });
  });

  describe('isolation', () => {
    it('another account’s key is 404 key_not_found for every read and change, and stays untouched', async () => {
      const { key } = await w.keys.create(B, newKey());
      const calls = [
        () => w.keys.get(A, key.id),
        () => w.keys.update(A, key.id, { name: 'stolen' }),
        () => w.keys.suspend(A, key.id),
        () => w.keys.resume(A, key.id),
        () => w.keys.cancel(A, key.id),
      ];
      for (const call of calls) expect(await refusal(call())).to.include({ status: 404, code: 'key_not_found' });
      expect((await w.keys.list(A, { page: 1, pageSize: 10, sort: 'created_at', order: 'desc' })).total).to.equal(0);
      expect(await w.keys.get(B, key.id)).to.include({ name: 'report-bot', status: 'active' });
      expect(w.events.all().filter((e) => e.accountId === 'acc_a')).to.have.length(0);
    });
  });

  describe('audit events and notices only for what commits', () => {
    it('a change whose unit of work fails leaves the key as it was, with no event, notice or local signal', async () => {
      const { key } = await w.keys.create(A, newKey());
      const append = w.events.append.bind(w.events);
      w.events.append = () => {
        throw new Error('audit insert failed');
      };
      expect((await rejection(w.keys.suspend(A, key.id))).message).to.equal('audit insert failed');
      w.events.append = append;
      expect(w.rows.rows.get(key.id)!.status).to.equal('active');
      expect(w.events.of('key.suspend')).to.have.length(0);
      expect(w.tx.notices).to.have.length(1);
      expect(w.committed).to.deep.equal([key.id]);
    });
  });

  describe('list', () => {
    const all = { page: 1, pageSize: 100, sort: 'created_at' as const, order: 'desc' as const };

    async function seed() {
      const active = (await w.keys.create(A, newKey({ name: 'Alpha active' }))).key;
      const suspended = (await w.keys.create(A, newKey({ name: 'beta suspended', dimension: '业务线' }))).key;
      await w.keys.suspend(A, suspended.id);
      const cancelled = (await w.keys.create(A, newKey({ name: 'gamma cancelled' }))).key;
      await w.keys.cancel(A, cancelled.id);
      const expired = (await w.keys.create(A, newKey({ name: 'delta expired', dimension: '成本中心' }))).key;
      w.rows.rows.get(expired.id)!.expiresAt = dayFromToday(-1);
      const graceOver = (await w.keys.create(A, newKey({ name: 'epsilon grace over' }))).key;
      Object.assign(w.rows.rows.get(graceOver.id)!, { rotatedTo: 'key_next', cancelsAt: new Date(Date.now() - 1000) });
      const graceRunning = (await w.keys.create(A, newKey({ name: 'zeta grace running' }))).key;
      Object.assign(w.rows.rows.get(graceRunning.id)!, { rotatedTo: 'key_next2', cancelsAt: new Date(Date.now() + 3600_000) });
      return { active, suspended, cancelled, expired, graceOver, graceRunning };
    }

    const names = (page: { items: Array<{ name: string }> }) => page.items.map((k) => k.name).sort();

    it('filters by the state keys read as: expired and grace-ended keys are derived, not stored', async () => {
      await seed();
      expect(names(await w.keys.list(A, { ...all, status: 'active' }))).to.deep.equal(['Alpha active', 'zeta grace running']);
      expect(names(await w.keys.list(A, { ...all, status: 'suspended' }))).to.deep.equal(['beta suspended']);
      expect(names(await w.keys.list(A, { ...all, status: 'expired' }))).to.deep.equal(['delta expired']);
      expect(names(await w.keys.list(A, { ...all, status: 'cancelled' }))).to.deep.equal(['epsilon grace over', 'gamma cancelled']);
    });

    it('over the credit limit, keys that would work read suspended and none reads active', async () => {
      await seed();
      w.overLimit.add('acc_a');
      expect((await w.keys.list(A, { ...all, status: 'active' })).total).to.equal(0);
      const suspended = await w.keys.list(A, { ...all, status: 'suspended' });
      expect(names(suspended)).to.deep.equal(['Alpha active', 'beta suspended', 'zeta grace running']);
      expect(suspended.items.find((k) => k.name === 'Alpha active')!.suspendedReason).to.equal('credit_limit');
    });

    it('filters by dimension and by a case-insensitive name fragment', async () => {
      await seed();
      expect(names(await w.keys.list(A, { ...all, dimension: '业务线' }))).to.deep.equal(['beta suspended']);
      expect(names(await w.keys.list(A, { ...all, q: 'ALPHA' }))).to.deep.equal(['Alpha active']);
    });

    it('sorts with nulls last either way, and pages with the total of all matches', async () => {
      const { expired } = await seed();
      const byExpiry = await w.keys.list(A, { ...all, sort: 'expires_at', order: 'asc' });
      expect(byExpiry.items[0]!.id).to.equal(expired.id);
      const desc = await w.keys.list(A, { ...all, sort: 'expires_at', order: 'desc' });
      expect(desc.items[0]!.id).to.equal(expired.id);
      const byName = await w.keys.list(A, { ...all, sort: 'name', order: 'asc', page: 2, pageSize: 4 });
      expect(byName).to.include({ total: 6, page: 2, pageSize: 4 });
      expect(byName.items.map((k) => k.name)).to.deep.equal(['gamma cancelled', 'zeta grace running']);
    });
  });
});
