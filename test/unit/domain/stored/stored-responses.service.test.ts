// The purge of an account's stored responses: owners only, the store's count
// reported and audited, another account's rows never asked for.
import { expect } from 'chai';
import type { Actor } from '../../../../src/domain/actor';
import { AuditService } from '../../../../src/domain/audit/audit.service';
import { StoredResponsesService, type AccountStorePurge } from '../../../../src/domain/stored/stored-responses.service';
import type { AppError } from '../../../../src/errors';
import { MemoryAuditRepository } from '../../../support/memory/audit';
import { MemoryTransactor, rejection } from '../../../support/memory/transactor';

const as = (accountId: string, role: Actor['role']): Actor => ({ accountId, userId: 'usr_1', label: 'someone@example.com', role, ip: '203.0.113.9' });

/** A store holding a number of stored rows per account. */
class FakeStore implements AccountStorePurge {
  readonly purged: string[] = [];
  constructor(readonly counts: Map<string, number>) {}

  async purgeAccount(accountId: string): Promise<number> {
    this.purged.push(accountId);
    const n = this.counts.get(accountId) ?? 0;
    this.counts.set(accountId, 0);
    return n;
  }
}

describe('StoredResponsesService (in-memory)', () => {
  let events: MemoryAuditRepository;
  let store: FakeStore;
  let service: StoredResponsesService;

  beforeEach(() => {
    events = new MemoryAuditRepository();
    store = new FakeStore(new Map([['acc_a', 7], ['acc_b', 3]]));
    service = new StoredResponsesService(new MemoryTransactor().register(events), new AuditService(events), store);
  });

  it("an owner purges the account's rows, gets how many, and the purge is audited with that count", async () => {
    expect(await service.purge(as('acc_a', 'owner'))).to.equal(7);
    expect(store.purged).to.deep.equal(['acc_a']);
    expect(store.counts.get('acc_b'), 'another account keeps its rows').to.equal(3);
    const [event] = events.of('stored_responses.purge');
    expect(event).to.include({ accountId: 'acc_a', actor: 'someone@example.com', ip: '203.0.113.9' });
    expect(event!.changes).to.deep.equal({ stored_responses: { from: 7, to: 0 } });
    expect(await service.purge(as('acc_a', 'owner')), 'nothing left').to.equal(0);
  });

  for (const role of ['admin', 'viewer'] as const) {
    it(`refuses an ${role} (403 owner_only): nothing purged, nothing audited`, async () => {
      const error = (await rejection(service.purge(as('acc_a', role)))) as AppError;
      expect(error).to.include({ status: 403, code: 'owner_only' });
      expect(store.purged).to.deep.equal([]);
      expect(events.all()).to.deep.equal([]);
    });
  }
});
