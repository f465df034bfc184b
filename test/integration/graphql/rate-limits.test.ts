// Issue 31 through GraphQL: rateLimit on createApiKey and updateApiKey (null
// removes it), the account's default for new keys, and a 400-class error
// naming the budget at fault — the same rules as REST.
import { expect } from 'chai';
import { api, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { CREATE_KEY, dataOf, errorCode, gql, uniqueName } from './graphql-client';

const WITH_LIMIT = `mutation Create($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey { id rateLimit { requestsPerMinute tokensPerMinute concurrentRequests } } } }`;
const UPDATE_LIMIT = `mutation Update($id: ID!, $input: UpdateApiKeyInput!) { updateApiKey(id: $id, input: $input) { id rateLimit { requestsPerMinute tokensPerMinute concurrentRequests } } }`;

describe('GraphQL: key rate limits', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t, { timezone: 'UTC' });
  });
  after(async () => t.close());

  it('sets a rate limit on create, changes it, and removes it with null', async () => {
    const created = await gql(t, WITH_LIMIT, { input: { name: uniqueName(), dimension: '部门', modelScope: ['tsxt-general'], rateLimit: { requestsPerMinute: 60, concurrentRequests: 2 } } }, owner.token);
    const key = dataOf(created).createApiKey.apiKey;
    expect(key.rateLimit).to.deep.equal({ requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: 2 });
    const changed = await gql(t, UPDATE_LIMIT, { id: key.id, input: { rateLimit: { tokensPerMinute: 50_000 } } }, owner.token);
    expect(dataOf(changed).updateApiKey.rateLimit).to.deep.equal({ requestsPerMinute: null, tokensPerMinute: 50_000, concurrentRequests: null });
    // A rotation's successor is held to the same limit.
    await gql(t, UPDATE_LIMIT, { id: key.id, input: { rateLimit: { concurrentRequests: 3 } } }, owner.token);
    const rotated = await api(t, 'POST', `/api/v1/keys/${key.id}/rotate`, owner.token, { grace_hours: 1 });
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(201);
    expect(rotated.body.rate_limit).to.deep.equal({ requests_per_minute: null, tokens_per_minute: null, concurrent_requests: 3 });
    const removed = await gql(t, UPDATE_LIMIT, { id: key.id, input: { rateLimit: null } }, owner.token);
    expect(dataOf(removed).updateApiKey.rateLimit).to.equal(null);
    // REST sees the same key.
    expect((await api(t, 'GET', `/api/v1/keys/${key.id}`, owner.token)).body.rate_limit).to.equal(null);
  });

  it('a new key gets the account default unless its creation names a limit', async () => {
    const defaults = { requests_per_minute: 120, tokens_per_minute: null, concurrent_requests: 8 };
    const set = await api(t, 'PUT', '/api/v1/account/key-defaults', owner.token, { rate_limit: defaults });
    expect(set.status).to.equal(200);
    expect(set.body).to.deep.equal({ rate_limit: defaults });
    expect((await api(t, 'GET', '/api/v1/account/key-defaults', owner.token)).body).to.deep.equal({ rate_limit: defaults });
    const plain = dataOf(await gql(t, CREATE_KEY.replace('apiKey {', 'apiKey { rateLimit { requestsPerMinute concurrentRequests } '), { input: { name: uniqueName(), dimension: '部门', modelScope: ['tsxt-general'] } }, owner.token));
    expect(plain.createApiKey.apiKey.rateLimit).to.deep.equal({ requestsPerMinute: 120, concurrentRequests: 8 });
    const without = await gql(t, WITH_LIMIT, { input: { name: uniqueName(), dimension: '部门', modelScope: ['tsxt-general'], rateLimit: null } }, owner.token);
    expect(dataOf(without).createApiKey.apiKey.rateLimit).to.equal(null);
    const bad = await api(t, 'PUT', '/api/v1/account/key-defaults', owner.token, { rate_limit: { requests_per_minute: 0 } });
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body)).to.contain('requests_per_minute');
    await api(t, 'PUT', '/api/v1/account/key-defaults', owner.token, { rate_limit: null });
  });

  it('refuses a budget that is not a positive whole number, naming it', async () => {
    const created = dataOf(await gql(t, WITH_LIMIT, { input: { name: uniqueName(), dimension: '部门', modelScope: ['tsxt-general'] } }, owner.token)).createApiKey.apiKey;
    const refused = await gql(t, UPDATE_LIMIT, { id: created.id, input: { rateLimit: { concurrentRequests: 0 } } }, owner.token);
    expect(errorCode(refused)).to.equal('invalid_field');
    expect(JSON.stringify(refused.errors)).to.contain('rate_limit.concurrent_requests');
  });
});
