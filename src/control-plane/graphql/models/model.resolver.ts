import { Query, Resolver, UseMiddleware } from 'type-graphql';
import type { Catalog } from '../../../core/catalog.types';
import type { Actor } from '../../../domain/actor';
import { CurrentActor } from '../common/context';
import { Cost } from '../common/query-cost';
import { storableArgs } from '../common/storable-args.middleware';
import { ModelType } from './model.type';

@Resolver()
@UseMiddleware(storableArgs)
export class ModelResolver {
  constructor(private readonly catalog: Pick<Catalog, 'models'>) {}

  @Query(() => [ModelType], { description: 'The catalog’s neutral model names, for key scopes.' })
  // Read from the catalog in memory.
  @Cost({ dbRoundTrips: 0 })
  async models(@CurrentActor() _actor: Actor): Promise<ModelType[]> {
    return this.catalog.models.map((m) => ({ name: m.name, displayName: m.displayName, createdAt: m.createdAt }));
  }
}
