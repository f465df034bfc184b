// Login throttling (issue 15): a parallel burst of guesses gets the budget,
// not a password check each; nobody can lock a user out from elsewhere; a
// client that sprays many e-mails is stopped; IPv6 clients count by /64.
import { expect } from 'chai';
import { throttleClient } from '../../../src/core/client-address';
import { LoginThrottle, type ThrottleLimits } from '../../../src/domain/auth/login-throttle';
import { createAccount, startTestApp, type TestApp } from '../../support/app';

const LIMITS: ThrottleLimits = { windowMs: 60_000, perPair: 5, perClient: 30, perEmail: 50, goodRecordMs: 3_600_000 };

describe('security: login throttle', () => {
  describe('LoginThrottle', () => {
    let clock = 1_000_000;
    const now = () => clock;

    it('counts an attempt when it begins: of 1,000 begun at once, 5 go ahead', () => {
      const throttle = new LoginThrottle(LIMITS, now);
      const admitted = Array.from({ length: 1000 }, () => throttle.begin('owner@example.com', '203.0.113.7')).filter((wait) => wait === 0);
      expect(admitted).to.have.length(5);
    });

    it('locks out the (e-mail, client) pair, not the user: the owner signs in from another address', () => {
      const throttle = new LoginThrottle(LIMITS, now);
      for (let i = 0; i < 5; i += 1) expect(throttle.begin('owner@example.com', '198.51.100.1')).to.equal(0);
      expect(throttle.begin('owner@example.com', '198.51.100.1')).to.be.greaterThan(0);
      expect(throttle.begin('owner@example.com', '192.0.2.44')).to.equal(0);
    });

    it('stops distributed guessing at the e-mail backstop, except for a client that signed in as that user before', () => {
      const throttle = new LoginThrottle(LIMITS, now);
      expect(throttle.begin('owner@example.com', '192.0.2.44')).to.equal(0);
      throttle.succeed('owner@example.com', '192.0.2.44');
      for (let i = 0; i < 50; i += 1) expect(throttle.begin('owner@example.com', `10.0.${i}.1`), `guess ${i}`).to.equal(0);
      expect(throttle.begin('owner@example.com', '10.9.9.9'), 'a 51st address').to.be.greaterThan(0);
      expect(throttle.begin('owner@example.com', '192.0.2.44'), 'the owner, from where they signed in before').to.equal(0);
    });

    it('limits one client over many e-mails (password spraying)', () => {
      const throttle = new LoginThrottle(LIMITS, now);
      for (let i = 0; i < 30; i += 1) expect(throttle.begin(`user${i}@example.com`, '203.0.113.9')).to.equal(0);
      expect(throttle.begin('user99@example.com', '203.0.113.9')).to.be.greaterThan(0);
    });

    it('takes a successful attempt back and forgets the pair, and the window slides', () => {
      const throttle = new LoginThrottle(LIMITS, now);
      for (let i = 0; i < 4; i += 1) throttle.begin('careless@example.com', '198.51.100.2');
      expect(throttle.begin('careless@example.com', '198.51.100.2')).to.equal(0);
      throttle.succeed('careless@example.com', '198.51.100.2');
      for (let i = 0; i < 5; i += 1) expect(throttle.begin('careless@example.com', '198.51.100.2')).to.equal(0);
      expect(throttle.begin('careless@example.com', '198.51.100.2')).to.be.within(1, 60_000);
      clock += 60_001;
      expect(throttle.begin('careless@example.com', '198.51.100.2')).to.equal(0);
    });

    it('counts IPv6 clients by their /64, and IPv4-mapped addresses as IPv4', () => {
      expect(throttleClient('2001:db8:1:2:aaaa::1')).to.equal(throttleClient('2001:0db8:0001:0002:ffff:1:2:3'));
      expect(throttleClient('2001:db8:1:2::1')).to.equal('2001:db8:1:2::/64');
      expect(throttleClient('2001:db8:1:3::1')).not.to.equal(throttleClient('2001:db8:1:2::1'));
      expect(throttleClient('::ffff:203.0.113.7')).to.equal('203.0.113.7');
      expect(throttleClient('fe80::1%eth0')).to.equal('fe80:0:0:0::/64');
    });
  });

  describe('POST /api/v1/sessions under a parallel burst', function () {
    this.timeout(60_000);
    let t: TestApp;
    before(async () => {
      t = await startTestApp();
    });
    after(async () => {
      await t?.close();
    });

    it('evaluates at most 5 of 40 parallel guesses; the right password afterwards is refused too', async () => {
      const victim = await createAccount(t);
      const attempt = (password: string) =>
        fetch(`${t.baseUrl}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: victim.email, password }) });
      const statuses = (await Promise.all(Array.from({ length: 40 }, (_, i) => attempt(`guess-${i}`)))).map((response) => response.status);
      expect(statuses.filter((status) => status === 401).length, statuses.join(',')).to.be.at.most(5);
      expect(statuses.filter((status) => status === 429).length).to.be.at.least(35);
      expect((await attempt(victim.password)).status).to.equal(429);
    });
  });

  describe('behind a load balancer (GATEWAY_TRUSTED_PROXIES)', function () {
    this.timeout(60_000);
    const login = (t: TestApp, email: string, password: string, forwardedFor: string) =>
      fetch(`${t.baseUrl}/api/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
        body: JSON.stringify({ email, password }),
      }).then((response) => response.status);

    it('with the proxy trusted, counts each forwarded client apart: one locked out, the next not', async () => {
      const t = await startTestApp({ env: { GATEWAY_TRUSTED_PROXIES: '127.0.0.1,::1' } });
      try {
        const user = await createAccount(t);
        for (let i = 0; i < 5; i += 1) expect(await login(t, user.email, `wrong-${i}`, '198.51.100.1')).to.equal(401);
        expect(await login(t, user.email, user.password, '198.51.100.1')).to.equal(429);
        expect(await login(t, user.email, user.password, '198.51.100.2'), 'another client behind the same proxy').to.equal(201);
      } finally {
        await t.close();
      }
    });

    it('without it, ignores X-Forwarded-For: a caller cannot pick a fresh client per guess', async () => {
      const t = await startTestApp();
      try {
        const user = await createAccount(t);
        for (let i = 0; i < 5; i += 1) expect(await login(t, user.email, `wrong-${i}`, `203.0.113.${i}`)).to.equal(401);
        expect(await login(t, user.email, 'wrong-again', '203.0.113.99')).to.equal(429);
      } finally {
        await t.close();
      }
    });
  });
});
