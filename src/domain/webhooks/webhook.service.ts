// Credit-alert thresholds and webhook endpoints of an account (issue 31).
// Owners and admins change them; viewers may read both (a secret is only
// ever shown in the answer to the creation).
import { newId } from '../../db/ids';
import { invalid, notFound } from '../../errors';
import type { AccountRepository } from '../accounts/account.repository';
import type { AccountService } from '../accounts/account.service';
import { assertCanMutate, type Actor } from '../actor';
import type { AuditService } from '../audit/audit.service';
import type { Transactor } from '../transaction';
import { zoneMonth } from '../zone-time';
import type { CreditAlertRepository } from './credit-alert.repository';
import { DEFAULT_THRESHOLDS, parseEvents, parseThresholds, reachedThreshold } from './webhook-events';
import type { DeliveryRecord, WebhookRecord, WebhookRepository } from './webhook.repository';
import { newWebhookSecret } from './webhook-signer';
import type { WebhookTargetGuard } from './webhook-target';

export const MAX_WEBHOOKS_PER_ACCOUNT = 10;

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  createdAt: Date;
}

/** A delivery as the log shows it (the next attempt only while pending). */
export type DeliveryView = DeliveryRecord;

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

const toView = (w: WebhookRecord): WebhookView => ({ id: w.id, url: w.url, events: w.events, createdAt: w.createdAt });

/** An account's credit-alert thresholds: percentages of the monthly limit. */
export interface CreditAlertsInput {
  thresholds: number[];
}

/** A new webhook endpoint: where to, and which events. */
export interface WebhookInput {
  url: string;
  events: string[];
}

/** The tables the service reads and writes; the account row's lock orders first settings and creations. */
export interface WebhookRepositories {
  webhooks: WebhookRepository;
  creditAlerts: CreditAlertRepository;
  accounts: AccountRepository;
}

export class WebhookService {
  constructor(
    private readonly transactor: Transactor,
    private readonly repos: WebhookRepositories,
    private readonly audit: AuditService,
    private readonly accounts: AccountService,
    private readonly usage: MonthUsage,
    private readonly targets: WebhookTargetGuard,
  ) {}

  async creditAlerts(actor: Actor): Promise<CreditAlertsView> {
    const account = await this.accounts.get(actor.accountId);
    const thresholds = (await this.repos.creditAlerts.thresholds(actor.accountId)) ?? [...DEFAULT_THRESHOLDS];
    if (account.creditLimitMicros === null) return { thresholds, month: zoneMonth(account.timezone), reachedThreshold: null };
    const { month, amountMicros } = await this.usage.monthToDate(account);
    return { thresholds, month, reachedThreshold: reachedThreshold(thresholds, account.creditLimitMicros, amountMicros) };
  }

  async setCreditAlerts(actor: Actor, input: CreditAlertsInput): Promise<CreditAlertsView> {
    assertCanMutate(actor);
    const thresholds = parseThresholds(input.thresholds);
    await this.transactor.run(async (tx) => {
      // The account row's lock orders concurrent first settings (both would insert the thresholds row).
      await this.repos.accounts.lockForUpdate(tx, actor.accountId);
      const before = (await this.repos.creditAlerts.replace(tx, actor.accountId, thresholds)) ?? [...DEFAULT_THRESHOLDS];
      if (JSON.stringify(before) !== JSON.stringify(thresholds)) {
        this.audit.record(tx, actor, 'account.credit_alerts_set', null, { thresholds: { from: before, to: thresholds } });
      }
    });
    return this.creditAlerts(actor);
  }

  async list(actor: Actor): Promise<WebhookView[]> {
    return (await this.repos.webhooks.list(actor.accountId)).map(toView);
  }

  /** Creates an endpoint; its signing secret is in this answer and nowhere else. */
  async create(actor: Actor, input: WebhookInput): Promise<{ webhook: WebhookView; secret: string }> {
    assertCanMutate(actor);
    const events = parseEvents(input.events);
    const url = (await this.targets.check(input.url)).toString();
    const secret = newWebhookSecret();
    const webhook: WebhookRecord = { id: newId('whk'), accountId: actor.accountId, url, events, createdAt: new Date() };
    await this.transactor.run(async (tx) => {
      // The account row's lock orders concurrent creations, so the endpoint cap holds.
      await this.repos.accounts.lockForUpdate(tx, actor.accountId);
      const count = await this.repos.webhooks.count(tx, actor.accountId);
      if (count >= MAX_WEBHOOKS_PER_ACCOUNT) throw invalid('url', `an account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first`, 'too_many_webhooks');
      await this.repos.webhooks.insert(tx, webhook, secret);
      this.audit.record(tx, actor, 'webhook.create', null, { webhook_id: { from: null, to: webhook.id }, url: { from: null, to: url }, events: { from: null, to: events } });
    });
    return { webhook: toView(webhook), secret };
  }

  /** Deletes an endpoint with its pending deliveries and log. */
  async delete(actor: Actor, id: string): Promise<void> {
    assertCanMutate(actor);
    await this.transactor.run(async (tx) => {
      const webhook = await this.repos.webhooks.remove(tx, actor.accountId, id);
      if (!webhook) throw webhookNotFound(id);
      this.audit.record(tx, actor, 'webhook.delete', null, { webhook_id: { from: webhook.id, to: null }, url: { from: webhook.url, to: null }, events: { from: webhook.events, to: null } });
    });
  }

  /** The endpoint's delivery log, newest first. */
  async deliveries(actor: Actor, id: string, page: { page: number; pageSize: number }): Promise<{ total: number; items: DeliveryView[] }> {
    if (!(await this.repos.webhooks.get(actor.accountId, id))) throw webhookNotFound(id);
    const { total, items } = await this.repos.webhooks.deliveries(id, { limit: page.pageSize, offset: (page.page - 1) * page.pageSize });
    // Only a pending delivery has a next attempt to show.
    return { total, items: items.map((d) => ({ ...d, nextAttemptAt: d.state === 'pending' ? d.nextAttemptAt : null })) };
  }
}

const webhookNotFound = (id: string) => notFound('webhook_not_found', `webhook ${id} not found`);
