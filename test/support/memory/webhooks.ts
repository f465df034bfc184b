import type { Tx } from '../../../src/domain/transaction';
import type { CreditAlertRepository } from '../../../src/domain/webhooks/credit-alert.repository';
import type { DeliveryRecord, WebhookRecord, WebhookRepository } from '../../../src/domain/webhooks/webhook.repository';
import { MemoryRows } from './transactor';

type StoredWebhook = WebhookRecord & { secret: string };
type StoredDelivery = DeliveryRecord & { webhookId: string };

/** webhooks in memory, with each endpoint's deliveries (deleted with it, as the foreign key cascades). */
export class MemoryWebhookRepository extends MemoryRows<StoredWebhook> implements WebhookRepository {
  readonly deliveryRows = new MemoryRows<StoredDelivery>();

  override snapshot(): () => void {
    const webhooks = super.snapshot();
    const deliveries = this.deliveryRows.snapshot();
    return () => {
      webhooks();
      deliveries();
    };
  }

  async list(accountId: string): Promise<WebhookRecord[]> {
    return this.all()
      .filter((w) => w.accountId === accountId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map(({ secret: _secret, ...w }) => structuredClone(w));
  }

  async get(accountId: string, id: string): Promise<WebhookRecord | null> {
    const found = this.rows.get(id);
    if (!found || found.accountId !== accountId) return null;
    const { secret: _secret, ...webhook } = found;
    return structuredClone(webhook);
  }

  async count(_tx: Tx, accountId: string): Promise<number> {
    return this.all().filter((w) => w.accountId === accountId).length;
  }

  async insert(_tx: Tx, webhook: WebhookRecord, secret: string): Promise<void> {
    this.rows.set(webhook.id, structuredClone({ ...webhook, secret }));
  }

  async remove(_tx: Tx, accountId: string, id: string): Promise<WebhookRecord | null> {
    const webhook = await this.get(accountId, id);
    if (!webhook) return null;
    this.rows.delete(id);
    for (const d of this.deliveryRows.all()) if (d.webhookId === id) this.deliveryRows.rows.delete(d.id);
    return webhook;
  }

  async deliveries(webhookId: string, page: { limit: number; offset: number }): Promise<{ total: number; items: DeliveryRecord[] }> {
    const matching = this.deliveryRows
      .all()
      .filter((d) => d.webhookId === webhookId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return { total: matching.length, items: matching.slice(page.offset, page.offset + page.limit).map(({ webhookId: _w, ...d }) => structuredClone(d)) };
  }

  /** A delivery as the dispatcher would have left it (tests). */
  addDelivery(webhookId: string, delivery: DeliveryRecord): void {
    this.deliveryRows.rows.set(delivery.id, structuredClone({ ...delivery, webhookId }));
  }

  /** The stored signing secret of an endpoint (tests). */
  secretOf(id: string): string | undefined {
    return this.rows.get(id)?.secret;
  }
}

/** account_credit_alerts in memory: one row per account, keyed by the account id. */
export class MemoryCreditAlertRepository extends MemoryRows<{ id: string; thresholds: number[] }> implements CreditAlertRepository {
  async thresholds(accountId: string): Promise<number[] | null> {
    const row = this.rows.get(accountId);
    return row ? [...row.thresholds] : null;
  }

  async replace(_tx: Tx, accountId: string, thresholds: number[]): Promise<number[] | null> {
    const before = await this.thresholds(accountId);
    this.rows.set(accountId, { id: accountId, thresholds: [...thresholds] });
    return before;
  }
}
