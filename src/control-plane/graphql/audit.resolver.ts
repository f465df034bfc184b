import { Arg, Ctx, ID, Int, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { Actor } from '../../domain/actor';
import { intArg, stringArg } from './args';
import { AuditEventPageType } from './audit-event.type';
import { CurrentActor, type GraphqlContext } from './context';
import { storableArgs } from './storable-args.middleware';

@Resolver()
@UseMiddleware(storableArgs)
export class AuditResolver {
  @Query(() => AuditEventPageType, { description: 'Who changed what, newest first; optionally for one key.' })
  async auditEvents(
    @CurrentActor() actor: Actor,
    @Ctx() { services }: GraphqlContext,
    @Arg('apiKeyId', () => ID, { nullable: true }) apiKeyId: string | null,
    @Arg('page', () => Int, { nullable: true, defaultValue: 1 }) page: number | null,
    @Arg('pageSize', () => Int, { nullable: true, defaultValue: 50 }) pageSize: number | null,
  ): Promise<AuditEventPageType> {
    const query = {
      page: intArg('page', page, 1, 1, 1_000_000),
      pageSize: intArg('pageSize', pageSize, 50, 1, 200),
      apiKeyId: stringArg('apiKeyId', apiKeyId, 40),
    };
    const result = await services.audit.list(actor, query);
    return {
      total: result.total,
      page: query.page,
      pageSize: query.pageSize,
      items: result.items.map((e) => ({
        id: e.id,
        actor: e.actor,
        action: e.action,
        apiKeyId: e.apiKeyId,
        changes: e.changes,
        ip: e.ip,
        createdAt: e.createdAt.toISOString(),
      })),
    };
  }
}
