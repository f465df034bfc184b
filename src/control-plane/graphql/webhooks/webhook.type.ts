import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'The account’s credit-alert thresholds and where the month stands against them.' })
export class CreditAlertsType {
  @Field(() => [Int], { description: 'Percentages of the monthly credit limit, ascending (default 80 and 100).' })
  thresholds!: number[];

  @Field(() => String, { description: 'YYYY-MM in the account time zone.' })
  month!: string;

  @Field(() => Int, { nullable: true, description: 'The highest threshold the month’s settled usage has reached; null if none or without a limit (the console’s banner).' })
  reachedThreshold!: number | null;
}

@ObjectType({ description: 'A webhook endpoint of the account; its secret is only in createWebhook’s payload.' })
export class WebhookType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  url!: string;

  @Field(() => [String], { description: 'credit.threshold_reached | credit.limit_reached | credit.restored | key.suspended | key.resumed | key.cancelled | key.expiring' })
  events!: string[];

  @Field(() => String, { description: 'ISO 8601 timestamp.' })
  createdAt!: string;
}

@ObjectType({ description: 'The only place a webhook’s signing secret ever appears.' })
export class CreateWebhookPayload {
  @Field(() => WebhookType)
  webhook!: WebhookType;

  @Field(() => String, { description: 'The signing secret (whsec_…); shown once.' })
  secret!: string;
}

@ObjectType({ description: 'One event sent (or to be sent) to a webhook endpoint.' })
export class WebhookDeliveryType {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'The `id` of the delivered body, the same on every attempt.' })
  eventId!: string;

  @Field(() => String)
  type!: string;

  @Field(() => String, { description: 'pending | delivered | failed' })
  state!: string;

  @Field(() => Int, { description: 'Attempts started so far.' })
  attempt!: number;

  @Field(() => Int, { nullable: true, description: 'The last attempt’s HTTP status; null when it got none.' })
  statusCode!: number | null;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601; when a pending delivery is tried next.' })
  nextRetryAt!: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601.' })
  deliveredAt!: string | null;

  @Field(() => String, { description: 'ISO 8601.' })
  createdAt!: string;
}

@ObjectType()
export class WebhookDeliveryPageType {
  @Field(() => Int)
  total!: number;

  @Field(() => [WebhookDeliveryType])
  items!: WebhookDeliveryType[];
}
