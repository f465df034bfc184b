// The audit service over an in-memory repository: events carry the actor and
// commit or vanish with their unit of work; a list reads one account only.
import { expect } from 'chai';
import { AuditService } from '../../../../src/domain/audit/audit.service';
import type { Actor } from '../../../../src/domain/actor';
import { MemoryAuditRepository } from '../../../support/memory/audit';
import { MemoryTransactor, rejection } from '../../../support/memory/transactor';

const owner = (accountId: string): Actor => ({ accountId, userId: 'usr_1', label: 'owner@example.com', role: 'owner', ip: '203.0.113.9' });

describe('AuditService (in-memory repository)', () => {
  let events: MemoryAuditRepository;
  let tx: MemoryTransactor;
  let audit: AuditService;

  beforeEach(() => {
    events = new MemoryAuditRepository();
    tx = new MemoryTransactor().register(events);
    audit = new AuditService(events);
  });

  it('records who did what, from where, to which key', async () => {
    await tx.run(async (t) => audit.record(t, owner('acc_a'), 'key.suspend', 'key_1', { status: { from: 'active', to: 'suspended' } }));
    const { total, items } = await audit.list(owner('acc_a'), { page: 1, pageSize: 10 });
    expect(total).to.equal(1);
    expect(items[0]!).to.include({ actor: 'owner@example.com', actorUserId: 'usr_1', action: 'key.suspend', apiKeyId: 'key_1', ip: '203.0.113.9' });
    expect(items[0]!.changes).to.deep.equal({ status: { from: 'active', to: 'suspended' } });
    expect(items[0]!.id).to.match(/^aud_/);
  });

  it('an event of a unit of work that fails is not kept', async () => {
    const failed = tx.run(async (t) => {
      audit.record(t, owner('acc_a'), 'key.update', 'key_1', { name: { from: 'a', to: 'b' } });
      throw new Error('the change failed');
    });
    expect((await rejection(failed)).message).to.equal('the change failed');
    expect((await audit.list(owner('acc_a'), { page: 1, pageSize: 10 })).total).to.equal(0);
  });

  it('lists one account only, filtered by key and paged', async () => {
    for (let i = 0; i < 5; i++) {
      await tx.run(async (t) => audit.record(t, owner('acc_a'), 'key.update', i % 2 === 0 ? 'key_even' : 'key_odd', {}));
    }
    await tx.run(async (t) => audit.record(t, owner('acc_b'), 'key.update', 'key_even', {}));
    expect((await audit.list(owner('acc_b'), { page: 1, pageSize: 10 })).total).to.equal(1);
    const even = await audit.list(owner('acc_a'), { apiKeyId: 'key_even', page: 1, pageSize: 2 });
    expect(even.total).to.equal(3);
    expect(even.items).to.have.length(2);
    const second = await audit.list(owner('acc_a'), { apiKeyId: 'key_even', page: 2, pageSize: 2 });
    expect(second.items).to.have.length(1);
  });
});
