import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { Actor } from '../../domain/actor';
import { KEY_SORTS, KEY_STATUSES } from '../../domain/keys/api-key.service';
import { DIMENSIONS } from '../../domain/keys/key-input';
import { ApiKeyFilterInput } from './api-key-filter.input';
import { toApiKeyType, toKeyBody } from './api-key.mapper';
import { ApiKeyPageType, ApiKeyType } from './api-key.type';
import { enumArg, intArg, stringArg } from './args';
import { CurrentActor, type GraphqlContext } from './context';
import { CreateApiKeyInput } from './create-api-key.input';
import { CreateApiKeyPayload } from './create-api-key.payload';
import { storableArgs } from './storable-args.middleware';
import { UpdateApiKeyInput } from './update-api-key.input';

@Resolver()
@UseMiddleware(storableArgs)
export class ApiKeyResolver {
  @Query(() => ApiKeyPageType, { description: 'The account’s keys, filtered and paged (default: newest first).' })
  async apiKeys(
    @CurrentActor() actor: Actor,
    @Ctx() { services }: GraphqlContext,
    @Arg('filter', () => ApiKeyFilterInput, { nullable: true }) filter: ApiKeyFilterInput | null,
    @Arg('page', () => Int, { nullable: true, defaultValue: 1 }) page: number | null,
    @Arg('pageSize', () => Int, { nullable: true, defaultValue: 20 }) pageSize: number | null,
    @Arg('sort', () => String, { nullable: true, defaultValue: 'created_at', description: KEY_SORTS.join(' | ') }) sort: string | null,
    @Arg('order', () => String, { nullable: true, defaultValue: 'desc', description: 'asc | desc' }) order: string | null,
  ): Promise<ApiKeyPageType> {
    const result = await services.keys.list(actor, {
      page: intArg('page', page, 1, 1, 1_000_000),
      pageSize: intArg('pageSize', pageSize, 20, 1, 100),
      status: enumArg('filter.status', filter?.status, KEY_STATUSES),
      dimension: enumArg('filter.dimension', filter?.dimension, DIMENSIONS),
      q: stringArg('filter.q', filter?.q, 64),
      sort: enumArg('sort', sort, KEY_SORTS) ?? 'created_at',
      order: enumArg('order', order, ['asc', 'desc'] as const) ?? 'desc',
    });
    return { total: result.total, page: result.page, pageSize: result.pageSize, items: result.items.map(toApiKeyType) };
  }

  @Query(() => ApiKeyType)
  async apiKey(@CurrentActor() actor: Actor, @Ctx() { services }: GraphqlContext, @Arg('id', () => ID) id: string): Promise<ApiKeyType> {
    return toApiKeyType(await services.keys.get(actor, id));
  }

  @Mutation(() => CreateApiKeyPayload, { description: 'Creates a key; the payload is the only place its secret appears.' })
  async createApiKey(
    @CurrentActor() actor: Actor,
    @Ctx() { services }: GraphqlContext,
    @Arg('input', () => CreateApiKeyInput) input: CreateApiKeyInput,
  ): Promise<CreateApiKeyPayload> {
    const created = await services.keys.create(actor, toKeyBody(input));
    return { apiKey: toApiKeyType(created.key), secret: created.secret };
  }

  @Mutation(() => ApiKeyType)
  async updateApiKey(
    @CurrentActor() actor: Actor,
    @Ctx() { services }: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateApiKeyInput) input: UpdateApiKeyInput,
  ): Promise<ApiKeyType> {
    return toApiKeyType(await services.keys.update(actor, id, toKeyBody(input)));
  }

  @Mutation(() => ApiKeyType)
  async suspendApiKey(@CurrentActor() actor: Actor, @Ctx() { services }: GraphqlContext, @Arg('id', () => ID) id: string): Promise<ApiKeyType> {
    return toApiKeyType(await services.keys.suspend(actor, id));
  }

  @Mutation(() => ApiKeyType)
  async resumeApiKey(@CurrentActor() actor: Actor, @Ctx() { services }: GraphqlContext, @Arg('id', () => ID) id: string): Promise<ApiKeyType> {
    return toApiKeyType(await services.keys.resume(actor, id));
  }

  @Mutation(() => ApiKeyType)
  async cancelApiKey(@CurrentActor() actor: Actor, @Ctx() { services }: GraphqlContext, @Arg('id', () => ID) id: string): Promise<ApiKeyType> {
    return toApiKeyType(await services.keys.cancel(actor, id));
  }
}
