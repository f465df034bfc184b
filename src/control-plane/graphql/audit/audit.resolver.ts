import { Arg, ID, Int, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { Actor } from '../../../domain/actor';
import type { AuditService } from '../../../domain/audit/audit.service';
import { intArg, stringArg } from '../common/args';
import { CurrentActor } from '../common/context';
import { gated } from '../common/gate.middleware';
import { Cost } from '../common/query-cost';
import { storableArgs } from '../common/storable-args.middleware';
import { AuditEventPageType } from './audit-event.type';

/** auditEvents' page sizes: the default and the largest. */
const AUDIT_PAGE = { default: 50, max: 200 };

@Resolver()
@UseMiddleware(storableArgs, gated)
export class AuditResolver {
  constructor(private readonly audit: AuditService) {}

  @Query(() => AuditEventPageType, { description: 'Who changed what, newest first; optionally for one key.' })
  // The page and its count.
  @Cost({ dbRoundTrips: 2, page: AUDIT_PAGE })
  async auditEvents(
    @CurrentActor() actor: Actor,
    @Arg('apiKeyId', () => ID, { nullable: true }) apiKeyId: string | null,
    @Arg('page', () => Int, { nullable: true, defaultValue: 1 }) page: number | null,
    @Arg('pageSize', () => Int, { nullable: true, defaultValue: AUDIT_PAGE.default }) pageSize: number | null,
  ): Promise<AuditEventPageType> {
    const query = {
      page: intArg('page', page, 1, 1, 1_000_000),
      pageSize: intArg('pageSize', pageSize, AUDIT_PAGE.default, 1, AUDIT_PAGE.max),
      apiKeyId: stringArg('apiKeyId', apiKeyId, 40),
    };
    const result = await this.audit.list(actor, query);
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
