import { Arg, ID, Int, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { Actor } from '../../../domain/actor';
import type { UsageQueryService } from '../../../metering/usage-query.service';
import { intArg, stringArg } from '../common/args';
import { CurrentActor } from '../common/context';
import { gated } from '../common/gate.middleware';
import { Cost } from '../common/query-cost';
import { storableArgs } from '../common/storable-args.middleware';
import { CreditStatusType } from './credit-status.type';
import { SettlementType } from './settlement.type';
import { toCreditStatusType, toKeyUsageType, toSettlementType, toUsageRecordPageType } from './usage.mapper';
import { KeyUsageType, UsageRecordPageType } from './usage.type';

/** usageRecords' page sizes: the default and the largest. */
const USAGE_PAGE = { default: 50, max: 500 };

@Resolver()
@UseMiddleware(storableArgs, gated)
export class UsageResolver {
  constructor(private readonly usage: UsageQueryService) {}

  @Query(() => KeyUsageType, { description: 'One key’s usage over account-zone days [start, end] (default: this month to today).' })
  // The account, the key's owner, the sums.
  @Cost({ dbRoundTrips: 3 })
  async keyUsage(
    @CurrentActor() actor: Actor,
    @Arg('id', () => ID) id: string,
    @Arg('start', () => String, { nullable: true, description: 'YYYY-MM-DD' }) start: string | null,
    @Arg('end', () => String, { nullable: true, description: 'YYYY-MM-DD' }) end: string | null,
  ): Promise<KeyUsageType> {
    return toKeyUsageType(await this.usage.keyUsage(actor, id, start ?? undefined, end ?? undefined));
  }

  @Query(() => UsageRecordPageType, { description: 'One item per call, newest first.' })
  // The account, the totals, the page.
  @Cost({ dbRoundTrips: 3, page: USAGE_PAGE })
  async usageRecords(
    @CurrentActor() actor: Actor,
    @Arg('start', () => String, { nullable: true, description: 'YYYY-MM-DD' }) start: string | null,
    @Arg('end', () => String, { nullable: true, description: 'YYYY-MM-DD' }) end: string | null,
    @Arg('apiKeyId', () => ID, { nullable: true }) apiKeyId: string | null,
    @Arg('model', () => String, { nullable: true }) model: string | null,
    @Arg('page', () => Int, { nullable: true, defaultValue: 1 }) page: number | null,
    @Arg('pageSize', () => Int, { nullable: true, defaultValue: USAGE_PAGE.default }) pageSize: number | null,
  ): Promise<UsageRecordPageType> {
    const result = await this.usage.listUsage(
      actor,
      {
        start: start ?? undefined,
        end: end ?? undefined,
        apiKeyId: stringArg('apiKeyId', apiKeyId, 40),
        model: stringArg('model', model, 128),
      },
      intArg('page', page, 1, 1, 1_000_000),
      intArg('pageSize', pageSize, USAGE_PAGE.default, 1, USAGE_PAGE.max),
    );
    return toUsageRecordPageType(result);
  }

  @Query(() => SettlementType)
  // The account, the closed statement, the sums per key.
  @Cost({ dbRoundTrips: 3 })
  async settlement(
    @CurrentActor() actor: Actor,
    @Arg('month', () => String, { description: 'YYYY-MM' }) month: string,
  ): Promise<SettlementType> {
    return toSettlementType(await this.usage.settlement(actor, month));
  }

  @Query(() => CreditStatusType)
  // The account, then usage and reservations in one statement.
  @Cost({ dbRoundTrips: 2 })
  async creditStatus(@CurrentActor() actor: Actor): Promise<CreditStatusType> {
    return toCreditStatusType(await this.usage.creditStatus(actor));
  }
}
