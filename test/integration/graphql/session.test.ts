import { expect } from 'chai';
import { addUser, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { dataOf, errorCode, gql } from './graphql-client';

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token expiresAt user { id email role accountId } } }`;
const VIEWER = `{ viewer { id email role account { id name timezone currency creditLimit } } }`;

describe('GraphQL sessions and viewer', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t, { timezone: 'Asia/Shanghai', creditLimitMicros: 5_000_500_000 });
  });
  after(async () => t.close());

  it('logs in without a session, and the token then works for viewer', async () => {
    const viewerUser = await addUser(t, owner.accountId, 'viewer');
    const response = await gql(t, LOGIN, { email: viewerUser.email, password: viewerUser.password });
    const grant = dataOf(response).login;
    expect(grant.token).to.match(/^tsxs_/);
    expect(Date.parse(grant.expiresAt)).to.be.greaterThan(Date.now());
    expect(grant.user).to.include({ email: viewerUser.email, role: 'viewer', accountId: owner.accountId });

    const me = dataOf(await gql(t, VIEWER, {}, grant.token)).viewer;
    expect(me).to.deep.include({ id: grant.user.id, email: viewerUser.email, role: 'viewer' });
    expect(me.account).to.deep.include({ id: owner.accountId, timezone: 'Asia/Shanghai', currency: 'CNY', creditLimit: '5000.5' });
  });

  it('refuses a wrong password with invalid_credentials', async () => {
    const response = await gql(t, LOGIN, { email: owner.email, password: 'not-the-password' });
    expect(errorCode(response)).to.equal('invalid_credentials');
    expect(response.errors![0]!.extensions.http).to.equal(401);
    expect(response.text).not.to.include('not-the-password');
  });

  it('throttles after 5 failed logins with login_throttled, http 429 and retryAfter seconds, as REST does', async () => {
    const victim = await addUser(t, owner.accountId, 'viewer');
    for (let i = 0; i < 5; i++) expect(errorCode(await gql(t, LOGIN, { email: victim.email, password: `wrong-${i}` }))).to.equal('invalid_credentials');
    const throttled = await gql(t, LOGIN, { email: victim.email, password: victim.password });
    expect(errorCode(throttled)).to.equal('login_throttled');
    const { http, retryAfter = 0 } = throttled.errors![0]!.extensions;
    expect(http).to.equal(429);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 15 * 60, `retryAfter ${retryAfter}`).to.equal(true);
  });

  it('refuses an empty e-mail naming the field', async () => {
    const response = await gql(t, LOGIN, { email: '', password: 'x' });
    expect(errorCode(response)).to.equal('invalid_field');
    expect(response.errors![0]!.extensions.field).to.equal('email');
  });

  it('logs out: the token stops working for GraphQL and REST', async () => {
    const session = await addUser(t, owner.accountId, 'owner');
    expect(dataOf(await gql(t, 'mutation { logout }', {}, session.token)).logout).to.equal(true);
    expect(errorCode(await gql(t, VIEWER, {}, session.token))).to.equal('invalid_session');
    expect(errorCode(await gql(t, 'mutation { logout }', {}, session.token))).to.equal('invalid_session');
    const rest = await fetch(`${t.baseUrl}/api/v1/keys`, { headers: { authorization: `Bearer ${session.token}` } });
    expect(rest.status).to.equal(401);
  });

  it('requires a session for logout and viewer', async () => {
    expect(errorCode(await gql(t, 'mutation { logout }'))).to.equal('missing_session');
    expect(errorCode(await gql(t, VIEWER))).to.equal('missing_session');
  });

  it('shows an unlimited account as creditLimit null', async () => {
    const unlimited = await createAccount(t);
    const me = dataOf(await gql(t, VIEWER, {}, unlimited.token)).viewer;
    expect(me.account.creditLimit).to.equal(null);
    expect(me.role).to.equal('owner');
  });
});
