// The webhooks table (an account's endpoints) and the delivery log read per
// endpoint. The dispatcher claims and updates deliveries with its own SQL
// (webhook-dispatcher.ts); this is the control plane's side.
import type { MikroORM } from '@mikro-orm/postgresql';
import { emOf } from '../pg-transactor';
import type { Tx } from '../transaction';
import { WebhookDeliverySchema, WebhookSchema, type Webhook, type WebhookDelivery } from './webhook.entity';

export interface WebhookRecord {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  createdAt: Date;
}

export interface DeliveryRecord {
  id: string;
  eventId: string;
  type: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
}

export interface WebhookRepository {
  /** The account's endpoints, oldest first (ties by id). Never their secrets. */
  list(accountId: string): Promise<WebhookRecord[]>;
  /** One of the account's endpoints (another account's is null). */
  get(accountId: string, id: string): Promise<WebhookRecord | null>;
  /** How many endpoints the account has, read in the unit of work. */
  count(tx: Tx, accountId: string): Promise<number>;
  insert(tx: Tx, webhook: WebhookRecord, secret: string): Promise<void>;
  /** Deletes one of the account's endpoints with its deliveries; what was deleted, or null when there was none. */
  remove(tx: Tx, accountId: string, id: string): Promise<WebhookRecord | null>;
  /** An endpoint's deliveries, newest first (ties by id), and how many there are. */
  deliveries(webhookId: string, page: { limit: number; offset: number }): Promise<{ total: number; items: DeliveryRecord[] }>;
}

const record = (w: Webhook, accountId: string): WebhookRecord => ({ id: w.id, accountId, url: w.url, events: w.events, createdAt: w.createdAt });

const deliveryRecord = (d: WebhookDelivery): DeliveryRecord => ({
  id: d.id,
  eventId: d.event.id,
  type: d.event.type,
  state: d.state,
  attempts: d.attempts,
  lastStatusCode: d.lastStatusCode ?? null,
  lastError: d.lastError ?? null,
  nextAttemptAt: d.nextAttemptAt ?? null,
  deliveredAt: d.deliveredAt ?? null,
  createdAt: d.createdAt,
});

export class PgWebhookRepository implements WebhookRepository {
  constructor(private readonly orm: MikroORM) {}

  async list(accountId: string): Promise<WebhookRecord[]> {
    const rows = await this.orm.em.fork().find(WebhookSchema, { account: accountId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return rows.map((w) => record(w, accountId));
  }

  async get(accountId: string, id: string): Promise<WebhookRecord | null> {
    const webhook = await this.orm.em.fork().findOne(WebhookSchema, { id, account: accountId });
    return webhook ? record(webhook, accountId) : null;
  }

  count(tx: Tx, accountId: string): Promise<number> {
    return emOf(tx).count(WebhookSchema, { account: accountId });
  }

  async insert(tx: Tx, webhook: WebhookRecord, secret: string): Promise<void> {
    const { accountId, ...rest } = webhook;
    emOf(tx).create(WebhookSchema, { ...rest, account: accountId, secret });
    await emOf(tx).flush();
  }

  async remove(tx: Tx, accountId: string, id: string): Promise<WebhookRecord | null> {
    const em = emOf(tx);
    const webhook = await em.findOne(WebhookSchema, { id, account: accountId });
    if (!webhook) return null;
    em.remove(webhook);
    await em.flush();
    return record(webhook, accountId);
  }

  async deliveries(webhookId: string, page: { limit: number; offset: number }): Promise<{ total: number; items: DeliveryRecord[] }> {
    const [rows, total] = await this.orm.em.fork().findAndCount(
      WebhookDeliverySchema,
      { webhook: webhookId },
      { populate: ['event'], orderBy: { createdAt: 'desc', id: 'desc' }, limit: page.limit, offset: page.offset },
    );
    return { total, items: rows.map(deliveryRecord) };
  }
}
