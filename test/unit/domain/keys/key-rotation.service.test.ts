// Rotation and its sweep over in-memory tables: the successor takes over the
// old key's owner fields under a new secret; the old key keeps working for its
// grace (planned) or is suspended at once (emergency); the sweep cancels each
// key whose grace has ended once, naming the rotation in the audit log.
import { expect } from 'chai';
import { CHANNELS } from '../../../../src/db/change-feed';
import { hashSecret } from '../../../../src/domain/keys/key-secret';
import { DEFAULT_GRACE_HOURS } from '../../../../src/domain/keys/key-rotation.service';
import { ROTATION_ACTOR_LABEL } from '../../../../src/domain/keys/key-rotation.sweep';
import type { AppError } from '../../../../src/errors';
import { rejection } from '../../../support/memory/transactor';
import { actor, dayFromToday, keysWorld, newKey } from './world';

const A = actor('acc_a');
const LIMIT = { requests_per_minute: 30, tokens_per_minute: 90_000, concurrent_requests: null };
const HOUR = 3600_000;

const refusal = async (promise: Promise<unknown>) => (await rejection(promise)) as AppError;

describe('KeyRotationService (in-memory repository)', () => {
  let w: ReturnType<typeof keysWorld>;

  beforeEach(() => {
    w = keysWorld();
  });

  async function keyToRotate() {
    return (await w.keys.create(A, newKey({ name: 'ledger-bot', dimension: '成本中心', modelScope: ['tsxt-coder', 'tsxt-lite'], expiresAt: dayFromToday(30), rateLimit: LIMIT }))).key;
  }

  it('a planned rotation: the successor copies the owner fields, the old key works until its grace ends', async () => {
    const old = await keyToRotate();
    const before = Date.now();
    const rotated = await w.rotations.rotate(A, old.id, {});
    expect(rotated.key).to.include({ name: 'ledger-bot', dimension: '成本中心', expiresAt: dayFromToday(30), status: 'active', rotatedFrom: old.id, usedTokens: 0 });
    expect(rotated.key.modelScope).to.deep.equal(['tsxt-coder', 'tsxt-lite']);
    expect(rotated.key.rateLimit).to.deep.equal(LIMIT);
    expect(rotated.key.id).to.not.equal(old.id);
    expect(w.rows.rows.get(rotated.key.id)!.secretHash).to.equal(hashSecret(rotated.secret));
    expect(rotated.previous).to.include({ id: old.id, status: 'active', rotatedTo: rotated.key.id });
    const grace = rotated.previous.cancelsAt!.getTime() - before;
    expect(grace).to.be.within(DEFAULT_GRACE_HOURS * HOUR - 1000, DEFAULT_GRACE_HOURS * HOUR + 1000);
    const rotate = w.events.of('key.rotate')[0]!;
    expect(rotate.apiKeyId).to.equal(old.id);
    expect(rotate.changes).to.deep.equal({
      rotated_to: { from: null, to: rotated.key.id },
      cancels_at: { from: null, to: rotated.previous.cancelsAt!.toISOString() },
      grace_hours: { from: null, to: DEFAULT_GRACE_HOURS },
    });
    const successorCreate = w.events.of('key.create').find((e) => e.apiKeyId === rotated.key.id)!;
    expect(successorCreate.changes.rotated_from).to.deep.equal({ from: null, to: old.id });
    expect(successorCreate.changes.rate_limit).to.deep.equal({ from: null, to: LIMIT });
    expect(w.tx.notices.at(-1)).to.deep.equal({ channel: CHANNELS.keys, id: old.id });
    expect(w.committed.at(-1)).to.equal(old.id);
  });

  it('grace_hours sets how long the old key keeps working', async () => {
    const old = await keyToRotate();
    const before = Date.now();
    const { previous } = await w.rotations.rotate(A, old.id, { graceHours: 5 });
    expect(previous.cancelsAt!.getTime() - before).to.be.within(5 * HOUR - 1000, 5 * HOUR + 1000);
  });

  it('an emergency rotation (grace 0) suspends the old key at once, with no grace', async () => {
    const old = await keyToRotate();
    const rotated = await w.rotations.rotate(A, old.id, { graceHours: 0 });
    expect(rotated.previous).to.include({ status: 'suspended', suspendedReason: 'owner', cancelsAt: null, rotatedTo: rotated.key.id });
    expect(rotated.key.status).to.equal('active');
    expect(w.events.of('key.rotate')[0]!.changes).to.deep.include({
      status: { from: 'active', to: 'suspended' },
      suspended_reason: { from: null, to: 'owner' },
      cancels_at: { from: null, to: null },
    });
  });

  it('a key already rotated is 409 key_rotated; a cancelled one, or one past its grace, 409 key_cancelled', async () => {
    const old = await keyToRotate();
    const { key: successor } = await w.rotations.rotate(A, old.id, {});
    expect(await refusal(w.rotations.rotate(A, old.id, {}))).to.include({ status: 409, code: 'key_rotated' });
    w.rows.rows.get(successor.id)!.cancelsAt = new Date(Date.now() - 1);
    expect(await refusal(w.rotations.rotate(A, successor.id, {}))).to.include({ status: 409, code: 'key_cancelled' });
    const other = (await w.keys.create(A, newKey({ name: 'other' }))).key;
    await w.keys.cancel(A, other.id);
    expect(await refusal(w.rotations.rotate(A, other.id, {}))).to.include({ status: 409, code: 'key_cancelled' });
    expect(w.events.of('key.rotate')).to.have.length(1);
  });

  it('another account’s key is 404 key_not_found; a viewer gets 403; a bad grace 400 naming grace_hours — nothing written', async () => {
    const old = await keyToRotate();
    const count = w.rows.all().length;
    expect(await refusal(w.rotations.rotate(actor('acc_b'), old.id, {}))).to.include({ status: 404, code: 'key_not_found' });
    expect(await refusal(w.rotations.rotate(actor('acc_a', 'viewer'), old.id, {}))).to.include({ status: 403, code: 'read_only_role' });
    for (const graceHours of [-1, 1.5, 721, Number.NaN]) {
      expect(await refusal(w.rotations.rotate(A, old.id, { graceHours }))).to.include({ status: 400, field: 'grace_hours' });
    }
    expect(w.rows.all()).to.have.length(count);
    expect(w.rows.rows.get(old.id)!.rotatedTo).to.equal(null);
  });

  it('the successor holds the name while the old key is in its grace; a new key may not take it', async () => {
    const old = await keyToRotate();
    const { key: successor } = await w.rotations.rotate(A, old.id, {});
    expect(successor.name).to.equal(old.name);
    // A new key may not take the name either: the old key in its grace still holds it.
    expect(await refusal(w.keys.create(A, newKey({ name: 'ledger-bot' })))).to.include({ status: 409, code: 'name_taken' });
  });
});

describe('KeyRotationSweep (in-memory repository)', () => {
  let w: ReturnType<typeof keysWorld>;

  beforeEach(() => {
    w = keysWorld();
  });

  it('cancels each key whose grace has ended once, audits it as the rotation and notifies', async () => {
    const due = (await w.keys.create(A, newKey({ name: 'due' }))).key;
    const running = (await w.keys.create(A, newKey({ name: 'running' }))).key;
    const dueRotation = await w.rotations.rotate(A, due.id, { graceHours: 1 });
    await w.rotations.rotate(A, running.id, { graceHours: 1 });
    w.rows.rows.get(due.id)!.cancelsAt = new Date(Date.now() - 1000);
    const notices = w.tx.notices.length;

    expect(await w.sweep.run()).to.equal(1);
    expect(await w.sweep.run()).to.equal(0);

    expect(w.rows.rows.get(due.id)).to.include({ status: 'cancelled' });
    expect(w.rows.rows.get(due.id)!.cancelledAt).to.be.instanceOf(Date);
    expect(w.rows.rows.get(running.id)!.status).to.equal('active');
    expect(w.rows.rows.get(dueRotation.key.id)!.status).to.equal('active');
    const cancels = w.events.of('key.cancel');
    expect(cancels).to.have.length(1);
    expect(cancels[0]).to.include({ apiKeyId: due.id, actor: ROTATION_ACTOR_LABEL, actorUserId: null, ip: null });
    expect(cancels[0]!.changes).to.deep.equal({ status: { from: 'active', to: 'cancelled' }, reason: { from: null, to: 'rotation_grace_ended' } });
    expect(w.tx.notices.slice(notices)).to.deep.equal([{ channel: CHANNELS.keys, id: due.id }]);
    expect(w.committed.at(-1)).to.equal(due.id);
  });

  it('an emergency-rotated key is left suspended: it has no grace to end', async () => {
    const key = (await w.keys.create(A, newKey())).key;
    await w.rotations.rotate(A, key.id, { graceHours: 0 });
    expect(await w.sweep.run()).to.equal(0);
    expect(w.rows.rows.get(key.id)!.status).to.equal('suspended');
  });

  it('the old key holds its name until the sweep cancels it', async () => {
    const key = (await w.keys.create(A, newKey({ name: 'handed-over' }))).key;
    const { key: successor } = await w.rotations.rotate(A, key.id, { graceHours: 1 });
    await w.keys.update(A, successor.id, { name: 'renamed-successor' });
    expect(await refusal(w.keys.create(A, newKey({ name: 'handed-over' })))).to.include({ code: 'name_taken' });
    w.rows.rows.get(key.id)!.cancelsAt = new Date(Date.now() - 1);
    await w.sweep.run();
    expect((await w.keys.create(A, newKey({ name: 'handed-over' }))).key.status).to.equal('active');
  });
});
