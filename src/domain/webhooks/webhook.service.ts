// Credit-alert thresholds and webhook endpoints of an account (issue 31).
// Owners and admins change them; viewers may read both (a secret is only
// ever shown in the answer to the creation).
import { txOf } from '../pg-transactor';
import { LockMode, type MikroORM } from '@mikro-orm/postgresql';
import { AccountSchema } from '../accounts/account.entity';
import { isObject } from '../../core/json-edit';
import { newId } from '../../db/ids';
import { inTransaction } from '../../db/transaction';
import { invalid, notFound } from '../../errors';
import type { AccountService } from '../accounts/account.service';
import { assertCanMutate, type Actor } from '../actor';
import type { AuditService } from '../audit/audit.service';
import { zoneMonth } from '../zone-time';
import { AccountCreditAlertSchema, WebhookDeliverySchema, WebhookSchema, type Webhook } from './webhook.entity';
import { DEFAULT_THRESHOLDS, parseEvents, parseThresholds, reachedThreshold } from './webhook-events';
import { newWebhookSecret } from './webhook-signer';
import type { WebhookTargetGuard } from './webhook-target';

export const MAX_WEBHOOKS_PER_ACCOUNT = 10;

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  createdAt: Date;
}

export interface DeliveryView {
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

export interface CreditAlertsView {
  thresholds: number[];
  /** YYYY-MM in the account zone. */
  month: string;
  /** The highest threshold the month's settled usage has reached; null if none (or no limit). */
  reachedThreshold: number | null;
}

/** Month-to-date settled amount of an account (CreditMonitor). */
export interface MonthUsage {
  monthToDate(account: { id: string; timezone: string }): Promise<{ month: string; amountMicros: number }>;
}

const toView = (w: Webhook): WebhookView => ({ id: w.id, url: w.url, events: w.events, createdAt: w.createdAt });

/** A body's fields beyond `allowed` are refused (400 naming the first), as the contract says. */
function onlyFields(body: unknown, allowed: readonly string[]): void {
  if (!isObject(body)) return;
  for (const name of Object.keys(body)) {
    if (!allowed.includes(name)) throw invalid(name, `unknown field "${name}"; allowed: ${allowed.join(', ')}`, 'unknown_field');
  }
}

export class WebhookService {
  constructor(
    private readonly orm: MikroORM,
    private readonly audit: AuditService,
    private readonly accounts: AccountService,
    private readonly usage: MonthUsage,
    private readonly targets: WebhookTargetGuard,
  ) {}

  async creditAlerts(actor: Actor): Promise<CreditAlertsView> {
    const account = await this.accounts.get(actor.accountId);
    const row = await this.orm.em.fork().findOne(AccountCreditAlertSchema, { account: actor.accountId });
    const thresholds = row?.thresholds ?? [...DEFAULT_THRESHOLDS];
    if (account.creditLimitMicros === null) return { thresholds, month: zoneMonth(account.timezone), reachedThreshold: null };
    const { month, amountMicros } = await this.usage.monthToDate(account);
    return { thresholds, month, reachedThreshold: reachedThreshold(thresholds, account.creditLimitMicros, amountMicros) };
  }

  async setCreditAlerts(actor: Actor, body: unknown): Promise<CreditAlertsView> {
    assertCanMutate(actor);
    onlyFields(body, ['thresholds']);
    const thresholds = parseThresholds(isObject(body) ? body.thresholds : undefined);
    await inTransaction(this.orm, async (em) => {
      // The account row's lock orders concurrent first settings (both would insert the thresholds row).
      await em.findOne(AccountSchema, { id: actor.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const row = await em.findOne(AccountCreditAlertSchema, { account: actor.accountId });
      const before = row?.thresholds ?? [...DEFAULT_THRESHOLDS];
      if (row) row.thresholds = thresholds;
      else em.create(AccountCreditAlertSchema, { account: actor.accountId, thresholds, updatedAt: new Date() });
      if (JSON.stringify(before) !== JSON.stringify(thresholds)) {
        this.audit.record(txOf(em), actor, 'account.credit_alerts_set', null, { thresholds: { from: before, to: thresholds } });
      }
    });
    return this.creditAlerts(actor);
  }

  async list(actor: Actor): Promise<WebhookView[]> {
    const rows = await this.orm.em.fork().find(WebhookSchema, { account: actor.accountId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return rows.map(toView);
  }

  /** Creates an endpoint; its signing secret is in this answer and nowhere else. */
  async create(actor: Actor, body: unknown): Promise<{ webhook: WebhookView; secret: string }> {
    assertCanMutate(actor);
    onlyFields(body, ['url', 'events']);
    const record = isObject(body) ? body : {};
    const events = parseEvents(record.events);
    const url = (await this.targets.check(record.url)).toString();
    const secret = newWebhookSecret();
    const webhook = await inTransaction(this.orm, async (em) => {
      // The account row's lock orders concurrent creations, so the endpoint cap holds.
      await em.findOne(AccountSchema, { id: actor.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const count = await em.count(WebhookSchema, { account: actor.accountId });
      if (count >= MAX_WEBHOOKS_PER_ACCOUNT) throw invalid('url', `an account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first`, 'too_many_webhooks');
      const created = em.create(WebhookSchema, { id: newId('whk'), account: actor.accountId, url, events, secret, createdAt: new Date() });
      this.audit.record(txOf(em), actor, 'webhook.create', null, { webhook_id: { from: null, to: created.id }, url: { from: null, to: url }, events: { from: null, to: events } });
      return created;
    });
    return { webhook: toView(webhook), secret };
  }

  /** Deletes an endpoint with its pending deliveries and log. */
  async delete(actor: Actor, id: string): Promise<void> {
    assertCanMutate(actor);
    await inTransaction(this.orm, async (em) => {
      const webhook = await em.findOne(WebhookSchema, { id, account: actor.accountId });
      if (!webhook) throw webhookNotFound(id);
      em.remove(webhook);
      this.audit.record(txOf(em), actor, 'webhook.delete', null, { webhook_id: { from: webhook.id, to: null }, url: { from: webhook.url, to: null }, events: { from: webhook.events, to: null } });
    });
  }

  /** The endpoint's delivery log, newest first. */
  async deliveries(actor: Actor, id: string, page: { page: number; pageSize: number }): Promise<{ total: number; items: DeliveryView[] }> {
    const em = this.orm.em.fork();
    const webhook = await em.findOne(WebhookSchema, { id, account: actor.accountId });
    if (!webhook) throw webhookNotFound(id);
    const [rows, total] = await em.findAndCount(
      WebhookDeliverySchema,
      { webhook: id },
      { populate: ['event'], orderBy: { createdAt: 'desc', id: 'desc' }, limit: page.pageSize, offset: (page.page - 1) * page.pageSize },
    );
    return {
      total,
      items: rows.map((d) => ({
        id: d.id,
        eventId: d.event.id,
        type: d.event.type,
        state: d.state,
        attempts: d.attempts,
        lastStatusCode: d.lastStatusCode ?? null,
        lastError: d.lastError ?? null,
        nextAttemptAt: d.state === 'pending' ? (d.nextAttemptAt ?? null) : null,
        deliveredAt: d.deliveredAt ?? null,
        createdAt: d.createdAt,
      })),
    };
  }
}

const webhookNotFound = (id: string) => notFound('webhook_not_found', `webhook ${id} not found`);
