// Console sessions (docs/architecture.md §14) and the health endpoints (docs/architecture.md §15).
import { expect } from 'chai';
import { addUser, api, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';

describe('REST control plane: sessions and health', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });

  after(async () => {
    await t.close();
  });

  const login = (email: unknown, password: unknown) => api(t, 'POST', '/api/v1/sessions', undefined, { email, password });

  describe('POST /api/v1/sessions', () => {
    let user: TestAccount;
    before(async () => {
      user = await createAccount(t, { role: 'admin' });
    });

    it('201 with a working token, its expiry and the user', async () => {
      const before = Date.now();
      const response = await login(user.email, user.password);
      expect(response.status, JSON.stringify(response.body)).to.equal(201);
      expect(response.body.token).to.be.a('string').with.length.greaterThan(30);
      expect(response.body.token).to.not.equal(user.token);
      expect(Date.parse(response.body.expires_at)).to.be.greaterThan(before + 60 * 60_000);
      expect(response.body.user).to.include({ email: user.email, role: 'admin', account_id: user.accountId });
      const keys = await api(t, 'GET', '/api/v1/keys', response.body.token);
      expect(keys.status).to.equal(200);
    });

    it('the e-mail is case-insensitive', async () => {
      const response = await login(user.email.toUpperCase(), user.password);
      expect(response.status).to.equal(201);
    });

    it('a wrong password → 401 invalid_credentials, and so does an unknown e-mail, with the same message', async () => {
      const wrong = await login(user.email, `${user.password}x`);
      expect(wrong.status).to.equal(401);
      expect(wrong.body.error.code).to.equal('invalid_credentials');
      expect(wrong.body).to.not.have.nested.property('token');
      const unknown = await login('nobody-here@example.com', user.password);
      expect(unknown.status).to.equal(401);
      expect(unknown.body.error).to.deep.equal(wrong.body.error);
    });

    it('a missing password or e-mail → 400 naming it', async () => {
      const noPassword = await api(t, 'POST', '/api/v1/sessions', undefined, { email: user.email });
      expect(noPassword.status).to.equal(400);
      expect(noPassword.body.error.field).to.equal('password');
      const noEmail = await api(t, 'POST', '/api/v1/sessions', undefined, { password: 'whatever-password' });
      expect(noEmail.status).to.equal(400);
      expect(noEmail.body.error.field).to.equal('email');
    });

    it('after 5 failures for an e-mail the 6th attempt is 429 login_throttled with retry-after, even with the right password', async () => {
      const victim = await createAccount(t);
      for (let i = 0; i < 5; i++) {
        const failed = await login(victim.email, `wrong-${i}`);
        expect(failed.status, `failure ${i + 1}`).to.equal(401);
      }
      const throttled = await login(victim.email, victim.password);
      expect(throttled.status, JSON.stringify(throttled.body)).to.equal(429);
      expect(throttled.body.error.code).to.equal('login_throttled');
      expect(throttled.body).to.not.have.nested.property('token');
      const retryAfter = Number(throttled.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).to.equal(true);
      expect(retryAfter).to.be.within(1, 15 * 60);

      // Also with the e-mail in another case.
      expect((await login(victim.email.toUpperCase(), victim.password)).status).to.equal(429);
      // Other users, from the same address, are not locked out.
      const bystander = await createAccount(t);
      expect((await login(bystander.email, bystander.password)).status).to.equal(201);
      // The victim's existing session still works.
      expect((await api(t, 'GET', '/api/v1/keys', victim.token)).status).to.equal(200);
    });

    it('four failures then the right password still signs in, and that resets the count', async () => {
      const careless = await createAccount(t);
      for (let i = 0; i < 4; i++) expect((await login(careless.email, `nope-${i}`)).status).to.equal(401);
      expect((await login(careless.email, careless.password)).status).to.equal(201);
      for (let i = 0; i < 4; i++) expect((await login(careless.email, `again-${i}`)).status).to.equal(401);
      expect((await login(careless.email, careless.password)).status).to.equal(201);
    });
  });

  describe('DELETE /api/v1/sessions/current', () => {
    it('revokes the session: 204, then 401 with that token', async () => {
      const user = await createAccount(t);
      const other = await addUser(t, user.accountId, 'viewer');
      expect((await api(t, 'GET', '/api/v1/keys', user.token)).status).to.equal(200);
      const revoked = await api(t, 'DELETE', '/api/v1/sessions/current', user.token);
      expect(revoked.status).to.equal(204);
      const after = await api(t, 'GET', '/api/v1/keys', user.token);
      expect(after.status).to.equal(401);
      expect(after.body.error.code).to.equal('invalid_session');
      // Revoking again is a 401 too; another user's session is unaffected.
      expect((await api(t, 'DELETE', '/api/v1/sessions/current', user.token)).status).to.equal(401);
      expect((await api(t, 'GET', '/api/v1/keys', other.token)).status).to.equal(200);
    });

    it('without a token → 401', async () => {
      const response = await api(t, 'DELETE', '/api/v1/sessions/current');
      expect(response.status).to.equal(401);
      expect(response.body.error.code).to.equal('missing_session');
    });
  });

  describe('health', () => {
    it('GET /healthz → 200', async () => {
      const response = await api(t, 'GET', '/healthz');
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ status: 'ok' });
    });

    it('GET /readyz → 200 with its checks, without a session', async () => {
      const response = await api(t, 'GET', '/readyz');
      expect(response.status).to.equal(200);
      expect(response.body.status).to.equal('ready');
      expect(response.body.checks).to.include({ database: true, catalog: true });
    });
  });
});
