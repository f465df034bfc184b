// Console users and sessions over in-memory repositories: creating users
// (validation naming the field, unique e-mail), logging in, a session's
// expiry and sign-out, and the bootstrap token that stays retired once
// signed out.
import { expect } from 'chai';
import { AccountService } from '../../../../src/domain/accounts/account.service';
import { AuditService } from '../../../../src/domain/audit/audit.service';
import { SessionService, hashToken } from '../../../../src/domain/auth/session.service';
import { LoginThrottle } from '../../../../src/domain/auth/login-throttle';
import { bootstrap, DEFAULT_ACCOUNT, DEFAULT_OWNER_EMAIL } from '../../../../src/domain/bootstrap';
import type { AppError } from '../../../../src/errors';
import { MemoryAccountRepository } from '../../../support/memory/accounts';
import { MemoryAuditRepository } from '../../../support/memory/audit';
import { MemoryConsoleSessionRepository, MemoryConsoleUserRepository } from '../../../support/memory/auth';
import { MemoryTransactor, rejection } from '../../../support/memory/transactor';

const HOUR = 3600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SessionService and bootstrap (in-memory repositories)', () => {
  let users: MemoryConsoleUserRepository;
  let sessionRows: MemoryConsoleSessionRepository;
  let tx: MemoryTransactor;
  const service = (ttlMs = HOUR, throttle = new LoginThrottle()) => new SessionService(tx, users, sessionRows, ttlMs, throttle);

  beforeEach(() => {
    users = new MemoryConsoleUserRepository();
    sessionRows = new MemoryConsoleSessionRepository(users);
    tx = new MemoryTransactor().register(users, sessionRows);
  });

  describe('users', () => {
    it('creates a user with a lower-cased e-mail and a scrypt hash, never the password', async () => {
      const user = await service().createUser({ accountId: 'acc_a', email: ' Ann@Example.COM ', password: 'correct horse', role: 'admin' });
      expect(user).to.include({ email: 'ann@example.com', role: 'admin', accountId: 'acc_a' });
      expect(user.id).to.match(/^usr_/);
      const stored = users.rows.get(user.id)!;
      expect(stored.passwordHash).to.match(/^scrypt\$/);
      expect(stored.passwordHash).to.not.include('correct horse');
      expect(await service().findUser('ANN@example.com')).to.deep.equal(user);
      expect(await service().countUsers()).to.equal(1);
    });

    const invalid: Array<[string, { email: string; password: string; role: string }, string]> = [
      ['an address that is not an e-mail', { email: 'ann', password: 'long enough', role: 'owner' }, 'email'],
      ['a password under 8 characters', { email: 'ann@example.com', password: 'short', role: 'owner' }, 'password'],
      ['an unknown role', { email: 'ann@example.com', password: 'long enough', role: 'root' }, 'role'],
    ];
    for (const [title, input, field] of invalid) {
      it(`refuses ${title} (400 naming ${field})`, async () => {
        const error = (await rejection(service().createUser({ accountId: 'acc_a', ...input }))) as AppError;
        expect(error).to.include({ status: 400, field });
        expect(users.all()).to.deep.equal([]);
      });
    }

    it('refuses an e-mail that is taken, whatever its case (409 email_taken naming email)', async () => {
      await service().createUser({ accountId: 'acc_a', email: 'ann@example.com', password: 'long enough', role: 'owner' });
      const error = (await rejection(service().createUser({ accountId: 'acc_b', email: 'ANN@example.com', password: 'long enough', role: 'viewer' }))) as AppError;
      expect(error).to.include({ status: 409, code: 'email_taken', field: 'email' });
      expect(users.all()).to.have.length(1);
    });
  });

  describe('login, authenticate, logout', () => {
    beforeEach(async () => {
      await service().createUser({ accountId: 'acc_a', email: 'ann@example.com', password: 'correct horse', role: 'admin' });
    });

    it('a login gives a token stored only as its SHA-256; the token authenticates as the user of its account', async () => {
      const sessions = service();
      const grant = await sessions.login('Ann@Example.com', 'correct horse', '203.0.113.9');
      expect(grant.token).to.match(/^tsxs_/);
      expect(grant.user).to.include({ email: 'ann@example.com', role: 'admin', accountId: 'acc_a' });
      expect(grant.expiresAt.getTime()).to.be.closeTo(Date.now() + HOUR, 5_000);
      const [row] = sessionRows.all();
      expect(row).to.include({ tokenHash: hashToken(grant.token), ip: '203.0.113.9', revokedAt: null });
      expect(JSON.stringify(sessionRows.all())).to.not.include(grant.token);
      const actor = await sessions.authenticate(`Bearer ${grant.token}`, '198.51.100.1');
      expect(actor).to.deep.equal({ accountId: 'acc_a', userId: grant.user.id, label: 'ann@example.com', role: 'admin', ip: '198.51.100.1' });
    });

    it('a wrong password and an unknown e-mail get the same 401, and no session', async () => {
      const wrong = (await rejection(service().login('ann@example.com', 'wrong horse', '203.0.113.9'))) as AppError;
      const unknown = (await rejection(service().login('bob@example.com', 'correct horse', '203.0.113.9'))) as AppError;
      expect(wrong).to.include({ status: 401, code: 'invalid_credentials' });
      expect(unknown).to.include({ status: 401, code: 'invalid_credentials', message: wrong.message });
      expect(sessionRows.all()).to.deep.equal([]);
    });

    it('an empty e-mail or password is a 400 naming it', async () => {
      expect(((await rejection(service().login('', 'x', '203.0.113.9'))) as AppError).field).to.equal('email');
      expect(((await rejection(service().login('ann@example.com', '', '203.0.113.9'))) as AppError).field).to.equal('password');
    });

    it('throttles guesses: after the budget even the right password gets 429 with retry-after', async () => {
      const sessions = service(HOUR, new LoginThrottle({ windowMs: 60_000, perPair: 2, perClient: 30, perEmail: 50, goodRecordMs: HOUR }));
      for (let i = 0; i < 2; i++) await rejection(sessions.login('ann@example.com', `wrong-${i}`, '203.0.113.9'));
      const error = (await rejection(sessions.login('ann@example.com', 'correct horse', '203.0.113.9'))) as AppError;
      expect(error).to.include({ status: 429, code: 'login_throttled' });
      expect(Number(error.headers['retry-after'])).to.be.greaterThan(0);
    });

    it('a session ends when it expires', async () => {
      const sessions = service(300);
      const grant = await sessions.login('ann@example.com', 'correct horse', '203.0.113.9');
      await sessions.authenticate(`Bearer ${grant.token}`, null);
      await sleep(350);
      expect(((await rejection(sessions.authenticate(`Bearer ${grant.token}`, null))) as AppError).code).to.equal('invalid_session');
    });

    it('logout revokes the session: the token no longer authenticates, and a second logout is a 401', async () => {
      const sessions = service();
      const grant = await sessions.login('ann@example.com', 'correct horse', '203.0.113.9');
      const other = await sessions.login('ann@example.com', 'correct horse', '203.0.113.9');
      await sessions.logout(`Bearer ${grant.token}`);
      expect(((await rejection(sessions.authenticate(`Bearer ${grant.token}`, null))) as AppError).code).to.equal('invalid_session');
      expect(((await rejection(sessions.logout(`Bearer ${grant.token}`))) as AppError).code).to.equal('invalid_session');
      expect((await sessions.authenticate(`Bearer ${other.token}`, null)).label, 'the other session lives on').to.equal('ann@example.com');
    });

    it('no or a malformed Authorization header is 401 missing_session; an unknown token 401 invalid_session', async () => {
      const sessions = service();
      expect(((await rejection(sessions.authenticate(undefined, null))) as AppError).code).to.equal('missing_session');
      expect(((await rejection(sessions.authenticate('Basic abc', null))) as AppError).code).to.equal('missing_session');
      expect(((await rejection(sessions.authenticate('Bearer tsxs_unknown', null))) as AppError).code).to.equal('invalid_session');
      expect(((await rejection(sessions.logout(undefined))) as AppError).code).to.equal('missing_session');
    });
  });

  describe('bootstrap', () => {
    let accounts: AccountService;
    let accountRows: MemoryAccountRepository;

    beforeEach(() => {
      accountRows = new MemoryAccountRepository();
      const events = new MemoryAuditRepository();
      tx.register(accountRows, events);
      accounts = new AccountService(tx, accountRows, new AuditService(events), { timezone: 'Asia/Shanghai', currency: 'CNY' });
    });

    it('a first start makes the default account, an owner and one session, shown once; a second start makes nothing', async () => {
      const sessions = service();
      const first = await bootstrap(accounts, sessions, undefined);
      expect(first).to.include({ email: DEFAULT_OWNER_EMAIL });
      const actor = await sessions.authenticate(`Bearer ${first!.token}`, null);
      expect(actor.role).to.equal('owner');
      expect((await accounts.findByName(DEFAULT_ACCOUNT))!.id).to.equal(actor.accountId);
      expect(await sessions.login(DEFAULT_OWNER_EMAIL, first!.password, '203.0.113.9')).to.have.property('token');
      expect(await bootstrap(accounts, sessions, undefined)).to.equal(null);
      expect(await accounts.list()).to.have.length(1);
      expect(users.all()).to.have.length(1);
    });

    it('GATEWAY_BOOTSTRAP_TOKEN becomes an owner session; once signed out it stays retired across restarts', async () => {
      const sessions = service();
      const retired: string[] = [];
      const token = 'bootstrap-token-of-the-operator';
      expect(await bootstrap(accounts, sessions, token, () => retired.push('retired'))).to.equal(null);
      expect((await sessions.authenticate(`Bearer ${token}`, null)).label).to.equal(DEFAULT_OWNER_EMAIL);
      await bootstrap(accounts, sessions, token, () => retired.push('retired'));
      expect(retired, 'a live token is left as it is').to.deep.equal([]);
      await sessions.logout(`Bearer ${token}`);
      await bootstrap(accounts, sessions, token, () => retired.push('retired'));
      expect(retired).to.deep.equal(['retired']);
      expect(((await rejection(sessions.authenticate(`Bearer ${token}`, null))) as AppError).code).to.equal('invalid_session');
      expect(sessionRows.all(), 'no second session was made for the token').to.have.length(1);
    });
  });
});
