import { Ctx, Int, Mutation, Resolver } from 'type-graphql';
import type { Actor } from '../../domain/actor';
import { CurrentActor, type GraphqlContext } from './context';

@Resolver()
export class StoredResponsesResolver {
  @Mutation(() => Int, {
    description: 'Deletes every stored response and conversation of the account (owners only); returns how many. Usage records stay. Audited.',
  })
  async purgeStoredResponses(@CurrentActor() actor: Actor, @Ctx() { services }: GraphqlContext): Promise<number> {
    return services.storedResponses.purge(actor);
  }
}
