// Credit alerts and signed webhooks (issue 31): an account's alert
// thresholds, its webhook endpoints, and the outbox — one row per event,
// written in the transaction of the change that causes it, and one delivery
// row per event and subscribed endpoint (a trigger fans events out), which
// the dispatcher of any gateway process claims, sends and retries.
import { defineEntity, p } from '@mikro-orm/core';
import { AccountSchema } from '../accounts/account.entity';

export const AccountCreditAlertSchema = defineEntity({
  name: 'AccountCreditAlert',
  tableName: 'account_credit_alerts',
  properties: {
    account: () => p.manyToOne(AccountSchema).primary().deleteRule('cascade'),
    /** Percentages of the monthly limit, ascending; the default (no row) is 80 and 100. */
    thresholds: p.json<number[]>(),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const WebhookSchema = defineEntity({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: p.string().length(40).primary(),
    account: () => p.manyToOne(AccountSchema).deleteRule('cascade'),
    url: p.string().length(2048),
    events: p.json<string[]>(),
    /** The signing secret: shown once at creation, never returned or logged again. */
    secret: p.string().length(80).lazy(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['account', 'createdAt'] }],
});

export const WebhookEventSchema = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_events',
  properties: {
    id: p.string().length(40).primary(),
    account: () => p.manyToOne(AccountSchema).deleteRule('cascade'),
    type: p.string().length(64),
    /** Makes "once per account, month and threshold" (and per key expiry) hold across processes. */
    dedupeKey: p.string().length(200).nullable().unique(),
    data: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['type', 'createdAt'] }],
});

export const WEBHOOK_DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;

export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.string().length(40).primary(),
    event: () => p.manyToOne(WebhookEventSchema).deleteRule('cascade'),
    webhook: () => p.manyToOne(WebhookSchema).deleteRule('cascade'),
    state: p.enum(WEBHOOK_DELIVERY_STATES),
    /** Attempts started; a claim counts one before the request is sent. */
    attempts: p.integer().default(0),
    /** When a dispatcher may next claim it (pending only); a claim moves it a lease ahead, so a killed process's claim comes back. */
    nextAttemptAt: p.datetime().nullable(),
    lastStatusCode: p.integer().nullable(),
    lastError: p.string().length(500).nullable(),
    deliveredAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['state', 'nextAttemptAt'] }, { properties: ['webhook', 'createdAt'] }],
});

export type Webhook = InstanceType<typeof WebhookSchema.class>;
export type WebhookDelivery = InstanceType<typeof WebhookDeliverySchema.class>;
