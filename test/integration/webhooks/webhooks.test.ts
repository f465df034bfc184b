// Issue 31: signed webhooks from an outbox. Endpoints are created, listed and
// deleted over REST (owners and admins; viewers list), delivery is signed
// and verified by a local receiver, a 500 is retried, loopback targets are
// refused unless GATEWAY_WEBHOOK_ALLOW_PRIVATE=1 — at creation and again at
// delivery (DNS rebinding) — and key state changes become events.
import { expect } from 'chai';
import pino from 'pino';
import { WebhookDispatcher } from '../../../src/domain/webhooks/webhook-dispatcher';
import { PgAccountRepository } from '../../../src/domain/accounts/account.repository';
import { PgTransactor } from '../../../src/domain/pg-transactor';
import { PgCreditAlertRepository } from '../../../src/domain/webhooks/credit-alert.repository';
import { PgWebhookRepository } from '../../../src/domain/webhooks/webhook.repository';
import { WebhookService } from '../../../src/domain/webhooks/webhook.service';
import { verifySignature } from '../../../src/domain/webhooks/webhook-signer';
import { WebhookTargetGuard, type Resolver } from '../../../src/domain/webhooks/webhook-target';
import type { Database } from '../../../src/db/database';
import { addUser, api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

const quiet = pino({ level: 'silent' });
/** Retries after a millisecond: the back-off's shape is the unit test's, this file checks that a retry happens. */
const FAST = { baseMs: 1, maxMs: 1, attempts: 3 };
/** The apps' own dispatchers stay idle (first round after a minute); each test drives one with `tick()`. */
const IDLE = { GATEWAY_WEBHOOK_POLL_MS: '60000' };

describe('webhooks: endpoints, signed delivery, retries, SSRF (REST)', function () {
  this.timeout(60_000);
  let strict: TestApp;
  let open: TestApp;
  let receiver: WebhookReceiver;
  let owner: TestAccount;

  const dispatcher = (t: TestApp, guard = new WebhookTargetGuard({ allowPrivate: true })) =>
    new WebhookDispatcher({ pool: testDb.pool, targets: guard, logger: quiet, pollMs: 60_000, sweepMs: 3_600_000, minimalCallMicros: t.app.services.catalog.minimalCallMicros, backoff: FAST });
  let testDb: Database;

  before(async () => {
    testDb = await testDatabase();
    strict = await startTestApp({ env: IDLE });
    open = await startTestApp({ env: { ...IDLE, GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1' } });
    receiver = await startWebhookReceiver();
    owner = await createAccount(open);
  });
  after(async () => {
    await strict?.close();
    await open?.close();
    await receiver?.close();
  });

  /** Deliveries of one endpoint through the REST log. */
  const deliveries = async (t: TestApp, token: string, webhookId: string) => {
    const response = await api(t, 'GET', `/api/v1/account/webhooks/${webhookId}/deliveries`, token);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.items as Array<Record<string, any>>;
  };

  it('refuses loopback, private, link-local and credential-bearing URLs at creation (400 naming url) unless the operator allows private targets', async () => {
    const account = await createAccount(strict);
    for (const url of [
      `${receiver.origin}/hook`,
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::1]/hook',
      'http://100.64.0.1/hook',
      'http://0.0.0.0/hook',
      'http://localhost/hook',
      'https://user:pass@example.com/hook',
      'ftp://example.com/hook',
      'not a url',
    ]) {
      const response = await api(strict, 'POST', '/api/v1/account/webhooks', account.token, { url, events: ['key.suspended'] });
      expect(response.status, `${url}: ${JSON.stringify(response.body)}`).to.equal(400);
      expect(response.body.error.field, url).to.equal('url');
    }
    const unknownEvent = await api(strict, 'POST', '/api/v1/account/webhooks', account.token, { url: 'https://93.184.216.34/hook', events: ['key.exploded'] });
    expect(unknownEvent.status).to.equal(400);
    expect(unknownEvent.body.error.field).to.equal('events');
    // With GATEWAY_WEBHOOK_ALLOW_PRIVATE=1 loopback is allowed; link-local (cloud metadata) stays refused.
    const local = await api(open, 'POST', '/api/v1/account/webhooks', owner.token, { url: `${receiver.origin}/hook`, events: ['key.suspended'] });
    expect(local.status, JSON.stringify(local.body)).to.equal(201);
    await api(open, 'DELETE', `/api/v1/account/webhooks/${local.body.webhook_id}`, owner.token);
    const metadata = await api(open, 'POST', '/api/v1/account/webhooks', owner.token, { url: 'http://169.254.169.254/', events: ['key.suspended'] });
    expect(metadata.status).to.equal(400);
    expect(metadata.body.error.field).to.equal('url');
  });

  it('creates an endpoint whose secret is shown once; viewers list without secrets but cannot create or delete; create and delete are audited', async () => {
    const account = await createAccount(open);
    const created = await api(open, 'POST', '/api/v1/account/webhooks', account.token, { url: `${receiver.origin}/a`, events: ['key.suspended', 'credit.threshold_reached'] });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ url: `${receiver.origin}/a` });
    expect(created.body.events).to.deep.equal(['key.suspended', 'credit.threshold_reached']);
    expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    const viewer = await addUser(open, account.accountId, 'viewer');
    const listed = await api(open, 'GET', '/api/v1/account/webhooks', viewer.token);
    expect(listed.status).to.equal(200);
    expect(listed.body.items).to.have.length(1);
    expect(listed.body.items[0]).to.not.have.property('secret');
    expect(JSON.stringify(listed.body)).to.not.include(created.body.secret);
    expect((await api(open, 'POST', '/api/v1/account/webhooks', viewer.token, { url: `${receiver.origin}/b`, events: ['key.resumed'] })).status).to.equal(403);
    expect((await api(open, 'DELETE', `/api/v1/account/webhooks/${created.body.webhook_id}`, viewer.token)).status).to.equal(403);
    // Another account's endpoint is not found.
    const other = await createAccount(open);
    expect((await api(open, 'DELETE', `/api/v1/account/webhooks/${created.body.webhook_id}`, other.token)).status).to.equal(404);
    expect((await api(open, 'DELETE', `/api/v1/account/webhooks/${created.body.webhook_id}`, account.token)).status).to.equal(204);
    expect((await api(open, 'GET', '/api/v1/account/webhooks', account.token)).body.items).to.deep.equal([]);
    const audit = await api(open, 'GET', '/api/v1/audit-events', account.token);
    const actions = (audit.body.items as Array<{ action: string }>).map((e) => e.action);
    expect(actions).to.include.members(['webhook.create', 'webhook.delete']);
    expect(JSON.stringify(audit.body)).to.not.include(created.body.secret);
    expect(open.logs.join('\n')).to.not.include(created.body.secret);
  });

  it('delivers key.suspended, key.resumed and key.cancelled signed; the receiver verifies the signature; a 500 is retried and logged', async () => {
    const account = await createAccount(open);
    const created = await api(open, 'POST', '/api/v1/account/webhooks', account.token, { url: `${receiver.origin}/keys`, events: ['key.suspended', 'key.resumed', 'key.cancelled'] });
    const secret: string = created.body.secret;
    const key = await createKey(open, account.token);
    const id: string = key.api_key_id;
    const d = dispatcher(open);
    try {
      expect((await api(open, 'POST', `/api/v1/keys/${id}/suspend`, account.token)).status).to.equal(200);
      receiver.answer(500);
      const before = receiver.received.length;
      await d.tick();
      expect(receiver.received.length - before, 'first attempt sent').to.equal(1);
      let log = await deliveries(open, account.token, created.body.webhook_id);
      expect(log).to.have.length(1);
      expect(log[0]).to.include({ type: 'key.suspended', state: 'pending', attempt: 1, status_code: 500, error: 'HTTP 500', delivered_at: null });
      expect(log[0]!.next_retry_at).to.be.a('string');
      await new Promise((r) => setTimeout(r, 5));
      await d.tick();
      log = await deliveries(open, account.token, created.body.webhook_id);
      expect(log[0]).to.include({ state: 'delivered', attempt: 2, status_code: 200, error: null, next_retry_at: null });
      expect(log[0]!.delivered_at).to.be.a('string');

      expect((await api(open, 'POST', `/api/v1/keys/${id}/resume`, account.token)).status).to.equal(200);
      expect((await api(open, 'DELETE', `/api/v1/keys/${id}`, account.token)).status).to.equal(200);
      await d.tick();
      const mine = receiver.received.filter((hook) => JSON.parse(hook.body).data?.api_key_id === id);
      expect(mine.map((hook) => JSON.parse(hook.body).type)).to.deep.equal(['key.suspended', 'key.suspended', 'key.resumed', 'key.cancelled']);
      const now = Math.floor(Date.now() / 1000);
      for (const hook of mine) {
        expect(hook.headers['content-type']).to.equal('application/json');
        const signature = hook.headers['x-gateway-signature'] as string;
        expect(signature).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
        expect(verifySignature(secret, hook.body, signature, now), 'signature verifies').to.equal(true);
        expect(verifySignature(secret, hook.body.replace('key.', 'kex.'), signature, now), 'a changed body does not').to.equal(false);
        const event = JSON.parse(hook.body);
        expect(Object.keys(event)).to.deep.equal(['id', 'type', 'created_at', 'data']);
        expect(event.data).to.include({ api_key_id: id, name: key.name });
      }
      // The retried delivery carries the same event id, so a receiver can drop the repeat.
      expect(JSON.parse(mine[0]!.body).id).to.equal(JSON.parse(mine[1]!.body).id);
      expect(JSON.parse(mine[3]!.body).data).to.include({ status: 'cancelled' });
    } finally {
      await d.close();
    }
  });

  it('an emergency rotation (grace 0) suspends the old key: key.suspended is delivered for it', async () => {
    const account = await createAccount(open);
    await api(open, 'POST', '/api/v1/account/webhooks', account.token, { url: `${receiver.origin}/rotate`, events: ['key.suspended'] });
    const key = await createKey(open, account.token);
    const rotated = await api(open, 'POST', `/api/v1/keys/${key.api_key_id}/rotate`, account.token, { grace_hours: 0 });
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(201);
    const d = dispatcher(open);
    try {
      await d.tick();
    } finally {
      await d.close();
    }
    const mine = receiver.received.map((hook) => JSON.parse(hook.body)).filter((event) => event.data?.api_key_id === key.api_key_id);
    expect(mine.map((event) => [event.type, event.data.status])).to.deep.equal([['key.suspended', 'suspended']]);
  });

  it('gives up after the last attempt: the delivery reads failed', async () => {
    const account = await createAccount(open);
    const created = await api(open, 'POST', '/api/v1/account/webhooks', account.token, { url: `${receiver.origin}/down`, events: ['key.suspended'] });
    const key = await createKey(open, account.token);
    await api(open, 'POST', `/api/v1/keys/${key.api_key_id}/suspend`, account.token);
    const d = dispatcher(open);
    try {
      for (let attempt = 0; attempt < FAST.attempts; attempt++) {
        receiver.answer(503);
        await d.tick();
        await new Promise((r) => setTimeout(r, 5));
      }
      await d.tick();
      const log = await deliveries(open, account.token, created.body.webhook_id);
      expect(log[0]).to.include({ state: 'failed', attempt: FAST.attempts, status_code: 503, next_retry_at: null, delivered_at: null });
    } finally {
      await d.close();
    }
  });

  it('DNS rebinding: a host that resolved to a public address at creation and to 127.0.0.1 at delivery is not connected to', async () => {
    const answers = ['93.184.216.34', '127.0.0.1'];
    let lookups = 0;
    const rebinding: Resolver = async () => [{ address: answers[Math.min(lookups++, answers.length - 1)]!, family: 4 }];
    const guard = new WebhookTargetGuard({ allowPrivate: false, resolve: rebinding });
    const { services } = strict.app;
    const repos = { webhooks: new PgWebhookRepository(testDb.orm), creditAlerts: new PgCreditAlertRepository(testDb.orm), accounts: new PgAccountRepository(testDb.orm) };
    const service = new WebhookService(new PgTransactor(testDb.orm), repos, services.audit, services.accounts, services.credit, guard);
    const account = await createAccount(strict);
    const actor = { accountId: account.accountId, userId: null, label: 'test', role: 'owner' as const, ip: null };
    const port = new URL(receiver.origin).port;
    const { webhook } = await service.create(actor, { url: `http://rebind.test:${port}/hook`, events: ['key.suspended'] });
    const key = await createKey(strict, account.token);
    await api(strict, 'POST', `/api/v1/keys/${key.api_key_id}/suspend`, account.token);
    const before = receiver.received.length;
    const d = dispatcher(strict, guard);
    try {
      await d.tick();
    } finally {
      await d.close();
    }
    expect(receiver.received.length, 'nothing reached the loopback receiver').to.equal(before);
    const log = await service.deliveries(actor, webhook.id, { page: 1, pageSize: 10 });
    expect(log.items[0]).to.include({ state: 'pending', attempts: 1, lastStatusCode: null });
    expect(log.items[0]!.lastError).to.match(/refused|127\.0\.0\.1/);

    // The same name allowed to resolve to loopback is delivered — to the address the guard resolved (no system DNS knows rebind.test).
    const allowing = new WebhookTargetGuard({ allowPrivate: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    await testDb.pool.query('update webhook_deliveries set next_attempt_at = now() where id = $1', [log.items[0]!.id]);
    const d2 = dispatcher(strict, allowing);
    try {
      await d2.tick();
    } finally {
      await d2.close();
    }
    expect(receiver.received.length).to.equal(before + 1);
    expect(receiver.received.at(-1)!.headers.host).to.equal(`rebind.test:${port}`);
  });
});
