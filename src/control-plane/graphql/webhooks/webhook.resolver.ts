import { Arg, ID, Int, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { Actor } from '../../../domain/actor';
import type { CreditAlertsView, DeliveryView, WebhookService, WebhookView } from '../../../domain/webhooks/webhook.service';
import { intArg } from '../common/args';
import { CurrentActor } from '../common/context';
import { gated } from '../common/gate.middleware';
import { Cost } from '../common/query-cost';
import { storableArgs } from '../common/storable-args.middleware';
import { CreateWebhookInput } from './create-webhook.input';
import { CreateWebhookPayload, CreditAlertsType, WebhookDeliveryPageType, WebhookType, type WebhookDeliveryType } from './webhook.type';

const toCreditAlertsType = (view: CreditAlertsView): CreditAlertsType => ({ ...view });
const toWebhookType = (view: WebhookView): WebhookType => ({ id: view.id, url: view.url, events: view.events, createdAt: view.createdAt.toISOString() });
const toDeliveryType = (view: DeliveryView): WebhookDeliveryType => ({
  id: view.id,
  eventId: view.eventId,
  type: view.type,
  state: view.state,
  attempt: view.attempts,
  statusCode: view.lastStatusCode,
  error: view.lastError,
  nextRetryAt: view.nextAttemptAt?.toISOString() ?? null,
  deliveredAt: view.deliveredAt?.toISOString() ?? null,
  createdAt: view.createdAt.toISOString(),
});

const DELIVERY_PAGE = { default: 50, max: 200 };

@Resolver()
@UseMiddleware(storableArgs, gated)
export class WebhookResolver {
  constructor(private readonly service: WebhookService) {}

  @Query(() => CreditAlertsType, { description: 'The account’s credit-alert thresholds and the highest one reached this month.' })
  @Cost({ dbRoundTrips: 3 })
  async creditAlerts(@CurrentActor() actor: Actor): Promise<CreditAlertsType> {
    return toCreditAlertsType(await this.service.creditAlerts(actor));
  }

  @Mutation(() => CreditAlertsType, { description: 'Replaces the credit-alert thresholds (1–5 unique integers 1–100, ascending); owners and admins only.' })
  @Cost({ dbRoundTrips: 7 })
  async setCreditAlerts(
    @CurrentActor() actor: Actor,
    @Arg('thresholds', () => [Int]) thresholds: number[],
  ): Promise<CreditAlertsType> {
    return toCreditAlertsType(await this.service.setCreditAlerts(actor, { thresholds }));
  }

  @Query(() => [WebhookType], { description: 'The account’s webhook endpoints, oldest first (no secrets).' })
  @Cost({ dbRoundTrips: 1 })
  async webhooks(@CurrentActor() actor: Actor): Promise<WebhookType[]> {
    return (await this.service.list(actor)).map(toWebhookType);
  }

  @Query(() => WebhookDeliveryPageType, { description: 'A webhook endpoint’s delivery log, newest first.' })
  @Cost({ dbRoundTrips: 3, page: DELIVERY_PAGE })
  async webhookDeliveries(
    @CurrentActor() actor: Actor,
    @Arg('id', () => ID) id: string,
    @Arg('page', () => Int, { nullable: true, defaultValue: 1 }) page: number | null,
    @Arg('pageSize', () => Int, { nullable: true, defaultValue: DELIVERY_PAGE.default }) pageSize: number | null,
  ): Promise<WebhookDeliveryPageType> {
    const result = await this.service.deliveries(actor, id, {
      page: intArg('page', page, 1, 1, 1_000_000),
      pageSize: intArg('pageSize', pageSize, DELIVERY_PAGE.default, 1, DELIVERY_PAGE.max),
    });
    return { total: result.total, items: result.items.map(toDeliveryType) };
  }

  @Mutation(() => CreateWebhookPayload, { description: 'Creates a webhook endpoint; the payload is the only place its signing secret appears. Owners and admins only.' })
  @Cost({ dbRoundTrips: 5 })
  async createWebhook(
    @CurrentActor() actor: Actor,
    @Arg('input', () => CreateWebhookInput) input: CreateWebhookInput,
  ): Promise<CreateWebhookPayload> {
    const created = await this.service.create(actor, { url: input.url, events: input.events });
    return { webhook: toWebhookType(created.webhook), secret: created.secret };
  }

  @Mutation(() => Boolean, { description: 'Deletes a webhook endpoint with its pending deliveries and log; owners and admins only.' })
  @Cost({ dbRoundTrips: 5 })
  async deleteWebhook(@CurrentActor() actor: Actor, @Arg('id', () => ID) id: string): Promise<boolean> {
    await this.service.delete(actor, id);
    return true;
  }
}
