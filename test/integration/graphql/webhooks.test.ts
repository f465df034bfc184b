// The GraphQL side of credit alerts and webhooks: the same service as REST,
// so the same rules, answers and errors.
import { expect } from 'chai';
import { addUser, api, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { dataOf, errorCode, gql } from './graphql-client';

const ALERTS = 'query { creditAlerts { thresholds month reachedThreshold } }';
const SET_ALERTS = 'mutation($t: [Int!]!) { setCreditAlerts(thresholds: $t) { thresholds month reachedThreshold } }';
const CREATE = 'mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { id url events createdAt } } }';
const LIST = 'query { webhooks { id url events createdAt } }';
const DELIVERIES = 'query($id: ID!) { webhookDeliveries(id: $id) { total items { eventId type state attempt } } }';
const DELETE = 'mutation($id: ID!) { deleteWebhook(id: $id) }';

describe('GraphQL credit alerts and webhooks', function () {
  this.timeout(60_000);
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp({ env: { GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1', GATEWAY_WEBHOOK_POLL_MS: '60000' } });
    owner = await createAccount(t);
  });
  after(async () => t.close());

  it('reads and sets thresholds as REST does; a bad list is invalid_field', async () => {
    const rest = (await api(t, 'GET', '/api/v1/account/credit-alerts', owner.token)).body;
    expect(dataOf(await gql(t, ALERTS, {}, owner.token)).creditAlerts).to.deep.equal({ thresholds: rest.thresholds, month: rest.month, reachedThreshold: rest.reached_threshold });
    expect(dataOf(await gql(t, SET_ALERTS, { t: [75, 95] }, owner.token)).setCreditAlerts.thresholds).to.deep.equal([75, 95]);
    expect(errorCode(await gql(t, SET_ALERTS, { t: [95, 75] }, owner.token))).to.equal('invalid_field');
  });

  it('creates (secret once), lists, logs and deletes an endpoint; a viewer cannot create', async () => {
    const created = dataOf(await gql(t, CREATE, { input: { url: 'http://127.0.0.1:9/h', events: ['key.cancelled'] } }, owner.token)).createWebhook;
    expect(created.secret).to.match(/^whsec_/);
    const listed = dataOf(await gql(t, LIST, {}, owner.token)).webhooks;
    expect(listed).to.deep.equal([created.webhook]);
    expect(dataOf(await gql(t, DELIVERIES, { id: created.webhook.id }, owner.token)).webhookDeliveries).to.deep.equal({ total: 0, items: [] });
    const viewer = await addUser(t, owner.accountId, 'viewer');
    expect(errorCode(await gql(t, CREATE, { input: { url: 'http://127.0.0.1:9/v', events: ['key.cancelled'] } }, viewer.token))).to.equal('read_only_role');
    expect(dataOf(await gql(t, DELETE, { id: created.webhook.id }, owner.token)).deleteWebhook).to.equal(true);
    expect(errorCode(await gql(t, DELETE, { id: created.webhook.id }, owner.token))).to.equal('webhook_not_found');
  });
});
