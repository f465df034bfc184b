import { Int, Mutation, Resolver, UseMiddleware } from 'type-graphql';
import type { Actor } from '../../../domain/actor';
import type { StoredResponsesService } from '../../../domain/stored/stored-responses.service';
import { CurrentActor } from '../common/context';
import { gated } from '../common/gate.middleware';
import { Cost } from '../common/query-cost';

// Through the control-plane gate like every database-backed field: a purge is batched deletes.
@Resolver()
@UseMiddleware(gated)
export class StoredResponsesResolver {
  constructor(private readonly stored: StoredResponsesService) {}

  // Two batched deletes at least (responses, conversations), then the audit event.
  @Cost({ dbRoundTrips: 4 })
  @Mutation(() => Int, {
    description: 'Deletes every stored response and conversation of the account (owners only); returns how many. Usage records stay. Audited.',
  })
  async purgeStoredResponses(@CurrentActor() actor: Actor): Promise<number> {
    return this.stored.purge(actor);
  }
}
