import { Arg, ID, Int, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import { assertCanMutate, type Actor } from '../../../domain/actor';
import { KEY_SORTS, KEY_STATUSES, type ApiKeyService } from '../../../domain/keys/api-key.service';
import { DIMENSIONS } from '../../../domain/keys/key-input';
import { enumArg, intArg, stringArg } from '../common/args';
import { CurrentActor } from '../common/context';
import { gated } from '../common/gate.middleware';
import { Cost } from '../common/query-cost';
import { storableArgs } from '../common/storable-args.middleware';
import { ApiKeyFilterInput } from './api-key-filter.input';
import { toApiKeyType, toCreateKeyInput, toUpdateKeyInput } from './api-key.mapper';
import { ApiKeyPageType, ApiKeyType } from './api-key.type';
import { CreateApiKeyInput } from './create-api-key.input';
import { CreateApiKeyPayload } from './create-api-key.payload';
import { UpdateApiKeyInput } from './update-api-key.input';

/** apiKeys' page sizes: the default and the largest. */
const KEY_PAGE = { default: 20, max: 100 };

@Resolver()
@UseMiddleware(storableArgs, gated)
export class ApiKeyResolver {
  constructor(private readonly keys: ApiKeyService) {}

  @Query(() => ApiKeyPageType, { description: 'The account’s keys, filtered and paged (default: newest first).' })
  // The account, its credit state, the page and its count.
  @Cost({ dbRoundTrips: 4, page: KEY_PAGE })
  async apiKeys(
    @CurrentActor() actor: Actor,
    @Arg('filter', () => ApiKeyFilterInput, { nullable: true }) filter: ApiKeyFilterInput | null,
    @Arg('page', () => Int, { nullable: true, defaultValue: 1 }) page: number | null,
    @Arg('pageSize', () => Int, { nullable: true, defaultValue: KEY_PAGE.default }) pageSize: number | null,
    @Arg('sort', () => String, { nullable: true, defaultValue: 'created_at', description: KEY_SORTS.join(' | ') }) sort: string | null,
    @Arg('order', () => String, { nullable: true, defaultValue: 'desc', description: 'asc | desc' }) order: string | null,
  ): Promise<ApiKeyPageType> {
    const result = await this.keys.list(actor, {
      page: intArg('page', page, 1, 1, 1_000_000),
      pageSize: intArg('pageSize', pageSize, KEY_PAGE.default, 1, KEY_PAGE.max),
      status: enumArg('filter.status', filter?.status, KEY_STATUSES),
      dimension: enumArg('filter.dimension', filter?.dimension, DIMENSIONS),
      q: stringArg('filter.q', filter?.q, 64),
      sort: enumArg('sort', sort, KEY_SORTS) ?? 'created_at',
      order: enumArg('order', order, ['asc', 'desc'] as const) ?? 'desc',
    });
    return { total: result.total, page: result.page, pageSize: result.pageSize, items: result.items.map(toApiKeyType) };
  }

  @Query(() => ApiKeyType)
  @Cost({ dbRoundTrips: 3 })
  async apiKey(@CurrentActor() actor: Actor, @Arg('id', () => ID) id: string): Promise<ApiKeyType> {
    return toApiKeyType(await this.keys.get(actor, id));
  }

  @Mutation(() => CreateApiKeyPayload, { description: 'Creates a key; the payload is the only place its secret appears.' })
  // A transaction: the account, its credit state, the name check, the key, the audit event, commit.
  @Cost({ dbRoundTrips: 7 })
  async createApiKey(
    @CurrentActor() actor: Actor,
    @Arg('input', () => CreateApiKeyInput) input: CreateApiKeyInput,
  ): Promise<CreateApiKeyPayload> {
    const created = await this.keys.create(actor, toCreateKeyInput(input));
    return { apiKey: toApiKeyType(created.key), secret: created.secret };
  }

  @Mutation(() => ApiKeyType)
  @Cost({ dbRoundTrips: 7 })
  async updateApiKey(
    @CurrentActor() actor: Actor,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateApiKeyInput) input: UpdateApiKeyInput,
  ): Promise<ApiKeyType> {
    // A viewer hears that it may not write before what is wrong with its input (the service checks the role too).
    assertCanMutate(actor);
    return toApiKeyType(await this.keys.update(actor, id, toUpdateKeyInput(input)));
  }

  @Mutation(() => ApiKeyType)
  @Cost({ dbRoundTrips: 6 })
  async suspendApiKey(@CurrentActor() actor: Actor, @Arg('id', () => ID) id: string): Promise<ApiKeyType> {
    return toApiKeyType(await this.keys.suspend(actor, id));
  }

  @Mutation(() => ApiKeyType)
  @Cost({ dbRoundTrips: 6 })
  async resumeApiKey(@CurrentActor() actor: Actor, @Arg('id', () => ID) id: string): Promise<ApiKeyType> {
    return toApiKeyType(await this.keys.resume(actor, id));
  }

  @Mutation(() => ApiKeyType)
  @Cost({ dbRoundTrips: 6 })
  async cancelApiKey(@CurrentActor() actor: Actor, @Arg('id', () => ID) id: string): Promise<ApiKeyType> {
    return toApiKeyType(await this.keys.cancel(actor, id));
  }
}
