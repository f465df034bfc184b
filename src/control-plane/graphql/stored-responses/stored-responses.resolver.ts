import { Int, Mutation, Resolver } from 'type-graphql';
import type { Actor } from '../../../domain/actor';
import type { StoredResponsesService } from '../../../domain/stored/stored-responses.service';
import { CurrentActor } from '../common/context';
import { Cost } from '../common/query-cost';

@Resolver()
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
