// The control plane's side of stored responses: an owner purges everything
// the account's keys stored (responses and conversations), audited. Keys'
// own lifecycle never deletes them (a cancelled key's responses stay until
// they expire or are purged).
import { appError } from '../../errors';
import type { Actor } from '../actor';
import type { AuditService } from '../audit/audit.service';
import type { Transactor } from '../transaction';

/** What the service needs of the store: one account's rows gone, and how many. */
export interface AccountStorePurge {
  purgeAccount(accountId: string): Promise<number>;
}

export class StoredResponsesService {
  constructor(
    private readonly transactor: Transactor,
    private readonly audit: AuditService,
    private readonly store: AccountStorePurge,
  ) {}

  /** Deletes every stored response and conversation of the actor's account; owners only. Returns how many. */
  async purge(actor: Actor): Promise<number> {
    if (actor.role !== 'owner') throw appError('ownerOnly');
    const deleted = await this.store.purgeAccount(actor.accountId);
    // Batches commit as they go (no long transaction over a large table): the audit event follows the last one.
    await this.transactor.run(async (tx) => {
      this.audit.record(tx, actor, 'stored_responses.purge', null, { stored_responses: { from: deleted, to: 0 } });
    });
    return deleted;
  }
}
