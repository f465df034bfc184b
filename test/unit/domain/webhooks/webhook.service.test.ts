// Credit-alert thresholds and webhook endpoints over in-memory repositories:
// the thresholds' rules and audit, the month's reached threshold, endpoint
// creation (secret once, SSRF-safe target, cap of 10), deletion with its log,
// and one account never seeing another's.
import { expect } from 'chai';
import { AccountService } from '../../../../src/domain/accounts/account.service';
import type { Actor } from '../../../../src/domain/actor';
import { AuditService } from '../../../../src/domain/audit/audit.service';
import { MAX_WEBHOOKS_PER_ACCOUNT, WebhookService, type MonthUsage } from '../../../../src/domain/webhooks/webhook.service';
import { WebhookTargetGuard } from '../../../../src/domain/webhooks/webhook-target';
import type { AppError } from '../../../../src/errors';
import { MemoryAccountRepository } from '../../../support/memory/accounts';
import { MemoryAuditRepository } from '../../../support/memory/audit';
import { MemoryCreditAlertRepository, MemoryWebhookRepository } from '../../../support/memory/webhooks';
import { MemoryTransactor, rejection } from '../../../support/memory/transactor';

const as = (accountId: string, role: Actor['role'] = 'owner'): Actor => ({ accountId, userId: 'usr_1', label: 'someone@example.com', role, ip: null });
const HOOK = { url: 'https://hooks.example.com/gateway', events: ['key.suspended', 'credit.limit_reached'] };

describe('WebhookService (in-memory repositories)', () => {
  let accountRows: MemoryAccountRepository;
  let webhooks: MemoryWebhookRepository;
  let creditAlerts: MemoryCreditAlertRepository;
  let events: MemoryAuditRepository;
  let tx: MemoryTransactor;
  let used: number;
  let service: WebhookService;

  beforeEach(() => {
    accountRows = new MemoryAccountRepository();
    webhooks = new MemoryWebhookRepository();
    creditAlerts = new MemoryCreditAlertRepository();
    events = new MemoryAuditRepository();
    tx = new MemoryTransactor().register(accountRows, webhooks, creditAlerts, events);
    accountRows.add({ id: 'acc_a', timezone: 'Asia/Shanghai', creditLimitMicros: 1_000_000 });
    accountRows.add({ id: 'acc_b', timezone: 'Europe/Berlin', creditLimitMicros: null });
    used = 0;
    const usage: MonthUsage = { monthToDate: async () => ({ month: '2026-11', amountMicros: used }) };
    const audit = new AuditService(events);
    const accounts = new AccountService(tx, accountRows, audit, { timezone: 'Asia/Shanghai', currency: 'CNY' });
    // hooks.example.com resolves to a public address; internal.example.com to a private one.
    const targets = new WebhookTargetGuard({
      allowPrivate: false,
      resolve: async (host) => [{ address: host.startsWith('internal') ? '10.0.0.7' : '93.184.216.34', family: 4 }],
    });
    service = new WebhookService(tx, { webhooks, creditAlerts, accounts: accountRows }, audit, accounts, usage, targets);
  });

  describe('credit alerts', () => {
    it('default to 80 and 100; the month and the highest threshold reached come from the settled usage against the limit', async () => {
      expect(await service.creditAlerts(as('acc_a', 'viewer'))).to.deep.equal({ thresholds: [80, 100], month: '2026-11', reachedThreshold: null });
      used = 850_000;
      expect((await service.creditAlerts(as('acc_a'))).reachedThreshold).to.equal(80);
      used = 1_000_000;
      expect((await service.creditAlerts(as('acc_a'))).reachedThreshold).to.equal(100);
    });

    it('an account without a limit reaches no threshold, its month in its own zone', async () => {
      used = 10_000_000;
      const view = await service.creditAlerts(as('acc_b'));
      expect(view.reachedThreshold).to.equal(null);
      expect(view.month).to.match(/^\d{4}-\d{2}$/);
    });

    it('a change is kept, audited from/to under the account row lock, and touches no other account', async () => {
      const view = await service.setCreditAlerts(as('acc_a', 'admin'), { thresholds: [50, 90, 100] });
      expect(view.thresholds).to.deep.equal([50, 90, 100]);
      expect((await service.creditAlerts(as('acc_b'))).thresholds).to.deep.equal([80, 100]);
      expect(accountRows.locked).to.deep.equal(['acc_a']);
      expect(events.of('account.credit_alerts_set').map((e) => e.changes)).to.deep.equal([{ thresholds: { from: [80, 100], to: [50, 90, 100] } }]);
    });

    it('setting the thresholds it already has is not audited', async () => {
      await service.setCreditAlerts(as('acc_a'), { thresholds: [80, 100] });
      await service.setCreditAlerts(as('acc_a'), { thresholds: [90] });
      await service.setCreditAlerts(as('acc_a'), { thresholds: [90] });
      expect(events.of('account.credit_alerts_set').map((e) => e.changes)).to.deep.equal([{ thresholds: { from: [80, 100], to: [90] } }]);
    });

    const bad: Array<[string, number[]]> = [
      ['none', []],
      ['more than five', [10, 20, 30, 40, 50, 60]],
      ['descending', [100, 80]],
      ['a repeat', [50, 50]],
      ['zero', [0, 50]],
      ['over 100', [101]],
      ['a fraction', [12.5]],
    ];
    for (const [title, thresholds] of bad) {
      it(`refuses ${title} (400 naming thresholds) and keeps what was there`, async () => {
        const error = (await rejection(service.setCreditAlerts(as('acc_a'), { thresholds }))) as AppError;
        expect(error).to.include({ status: 400, field: 'thresholds' });
        expect((await service.creditAlerts(as('acc_a'))).thresholds).to.deep.equal([80, 100]);
        expect(events.all()).to.deep.equal([]);
      });
    }

    it('refuses a viewer (403)', async () => {
      expect(((await rejection(service.setCreditAlerts(as('acc_a', 'viewer'), { thresholds: [80] }))) as AppError).code).to.equal('read_only_role');
    });
  });

  describe('webhooks', () => {
    it('creates an endpoint: the secret is in the answer only, the list shows no secret, the creation is audited', async () => {
      const { webhook, secret } = await service.create(as('acc_a', 'admin'), HOOK);
      expect(webhook).to.include({ url: HOOK.url });
      expect(webhook.id).to.match(/^whk_/);
      expect(webhook.events).to.deep.equal(HOOK.events);
      expect(secret).to.match(/^whsec_/);
      expect(webhooks.secretOf(webhook.id)).to.equal(secret);
      const listed = await service.list(as('acc_a', 'viewer'));
      expect(listed).to.deep.equal([webhook]);
      expect(JSON.stringify(listed)).to.not.include(secret);
      expect(events.of('webhook.create')[0]!.changes).to.deep.equal({
        webhook_id: { from: null, to: webhook.id },
        url: { from: null, to: HOOK.url },
        events: { from: null, to: HOOK.events },
      });
      expect(JSON.stringify(events.all())).to.not.include(secret);
    });

    const bad: Array<[string, { url: string; events: string[] }, string]> = [
      ['no events', { url: HOOK.url, events: [] }, 'events'],
      ['an unknown event', { url: HOOK.url, events: ['key.gone'] }, 'events'],
      ['a repeated event', { url: HOOK.url, events: ['key.resumed', 'key.resumed'] }, 'events'],
      ['a URL that is not one', { url: 'not a url', events: ['key.resumed'] }, 'url'],
      ['another scheme', { url: 'ftp://hooks.example.com/x', events: ['key.resumed'] }, 'url'],
      ['credentials in the URL', { url: 'https://user:pw@hooks.example.com/x', events: ['key.resumed'] }, 'url'],
      ['a host on a private network', { url: 'https://internal.example.com/x', events: ['key.resumed'] }, 'url'],
      ['the cloud metadata address', { url: 'http://169.254.169.254/latest', events: ['key.resumed'] }, 'url'],
    ];
    for (const [title, input, field] of bad) {
      it(`refuses ${title} (400 naming ${field}) and creates nothing`, async () => {
        const error = (await rejection(service.create(as('acc_a'), input))) as AppError;
        expect(error).to.include({ status: 400, field });
        expect(webhooks.all()).to.deep.equal([]);
        expect(events.all()).to.deep.equal([]);
      });
    }

    it(`holds at most ${MAX_WEBHOOKS_PER_ACCOUNT} endpoints per account (400 too_many_webhooks), under the account row lock`, async () => {
      const all = await Promise.all(Array.from({ length: MAX_WEBHOOKS_PER_ACCOUNT + 2 }, (_, i) => service.create(as('acc_a'), { ...HOOK, url: `${HOOK.url}/${i}` }).then(
        () => 'created',
        (error: AppError) => error.code,
      )));
      expect(all.filter((r) => r === 'created')).to.have.length(MAX_WEBHOOKS_PER_ACCOUNT);
      expect(all.filter((r) => r === 'too_many_webhooks')).to.have.length(2);
      expect(await service.list(as('acc_a'))).to.have.length(MAX_WEBHOOKS_PER_ACCOUNT);
      expect(events.of('webhook.create')).to.have.length(MAX_WEBHOOKS_PER_ACCOUNT);
      expect(await service.create(as('acc_b'), HOOK), "another account's cap is its own").to.have.property('secret');
    });

    it('lists oldest first and only the actor account', async () => {
      const first = await service.create(as('acc_a'), { ...HOOK, url: `${HOOK.url}/1` });
      await new Promise((resolve) => setTimeout(resolve, 3));
      const second = await service.create(as('acc_a'), { ...HOOK, url: `${HOOK.url}/2` });
      await service.create(as('acc_b'), HOOK);
      expect((await service.list(as('acc_a'))).map((w) => w.id)).to.deep.equal([first.webhook.id, second.webhook.id]);
      expect(await service.list(as('acc_b'))).to.have.length(1);
    });

    it("deletes an endpoint with its delivery log, audited; another account's id is 404 and stays", async () => {
      const { webhook } = await service.create(as('acc_a'), HOOK);
      webhooks.addDelivery(webhook.id, delivery('dlv_1', 'delivered'));
      const error = (await rejection(service.delete(as('acc_b'), webhook.id))) as AppError;
      expect(error).to.include({ status: 404, code: 'webhook_not_found' });
      expect(((await rejection(service.deliveries(as('acc_b'), webhook.id, { page: 1, pageSize: 10 }))) as AppError).code).to.equal('webhook_not_found');
      expect(await service.list(as('acc_a'))).to.have.length(1);
      await service.delete(as('acc_a'), webhook.id);
      expect(await service.list(as('acc_a'))).to.deep.equal([]);
      expect(webhooks.deliveryRows.all()).to.deep.equal([]);
      expect(events.of('webhook.delete')[0]!.changes).to.deep.equal({
        webhook_id: { from: webhook.id, to: null },
        url: { from: HOOK.url, to: null },
        events: { from: HOOK.events, to: null },
      });
      expect(((await rejection(service.delete(as('acc_a'), webhook.id))) as AppError).code).to.equal('webhook_not_found');
    });

    it('refuses a viewer creating or deleting (403)', async () => {
      const { webhook } = await service.create(as('acc_a'), HOOK);
      expect(((await rejection(service.create(as('acc_a', 'viewer'), HOOK))) as AppError).code).to.equal('read_only_role');
      expect(((await rejection(service.delete(as('acc_a', 'viewer'), webhook.id))) as AppError).code).to.equal('read_only_role');
      expect(await service.list(as('acc_a'))).to.have.length(1);
    });

    it('pages the delivery log newest first; only a pending delivery shows its next attempt', async () => {
      const { webhook } = await service.create(as('acc_a'), HOOK);
      webhooks.addDelivery(webhook.id, delivery('dlv_1', 'delivered', '2026-11-29T01:00:00Z'));
      webhooks.addDelivery(webhook.id, delivery('dlv_2', 'failed', '2026-11-29T02:00:00Z'));
      webhooks.addDelivery(webhook.id, delivery('dlv_3', 'pending', '2026-11-29T03:00:00Z'));
      const first = await service.deliveries(as('acc_a', 'viewer'), webhook.id, { page: 1, pageSize: 2 });
      expect(first.total).to.equal(3);
      expect(first.items.map((d) => d.id)).to.deep.equal(['dlv_3', 'dlv_2']);
      expect(first.items[0]!.nextAttemptAt).to.be.instanceOf(Date);
      expect(first.items[1]!.nextAttemptAt).to.equal(null);
      const second = await service.deliveries(as('acc_a'), webhook.id, { page: 2, pageSize: 2 });
      expect(second.items.map((d) => d.id)).to.deep.equal(['dlv_1']);
      expect(second.items[0]!.nextAttemptAt).to.equal(null);
    });
  });
});

function delivery(id: string, state: 'pending' | 'delivered' | 'failed', at = '2026-11-29T00:00:00Z') {
  return {
    id,
    eventId: `evt_${id}`,
    type: 'key.suspended',
    state,
    attempts: 1,
    lastStatusCode: state === 'delivered' ? 200 : 503,
    lastError: null,
    nextAttemptAt: new Date('2026-11-29T09:00:00Z'),
    deliveredAt: state === 'delivered' ? new Date(at) : null,
    createdAt: new Date(at),
  };
}
