// The operator CLI (docs/architecture.md §16.5) as an operator runs it: a child process with
// DATABASE_URL, JSON on stdout, and its changes visible to a running gateway.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { runAdmin, runAdminWithInput, type AdminRun } from '../../support/admin-cli';
import { addUser, api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';

const unique = () => randomBytes(4).toString('hex');

describe('operator CLI (src/cli/admin.ts)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let databaseUrl: string;

  before(async () => {
    t = await startTestApp();
    databaseUrl = (await testDatabase()).url;
  });

  after(async () => {
    await t.close();
  });

  const admin = (...args: string[]) => runAdmin(databaseUrl, ...args);

  function json<T = any>(run: AdminRun): T {
    expect(run.code, run.stderr).to.equal(0);
    return JSON.parse(run.stdout) as T;
  }

  describe('accounts', () => {
    let accountId: string;
    const name = `cli-acct-${unique()}`;

    before(async () => {
      const created = json(await admin('account', 'create', '--name', name, '--timezone', 'Asia/Shanghai', '--credit-limit', '100'));
      accountId = created.account_id;
    });

    it('account create prints JSON with the new account_id and its settings', async () => {
      expect(accountId).to.match(/^acc_[0-9A-Z]{26}$/);
      const stored = await t.app.services.accounts.get(accountId);
      expect(stored).to.include({ name, timezone: 'Asia/Shanghai', creditLimitMicros: 100_000_000 });
    });

    it('account list includes it and the bootstrap account `default`', async () => {
      const accounts = json<Array<Record<string, unknown>>>(await admin('account', 'list'));
      expect(accounts).to.be.an('array');
      const mine = accounts.find((a) => a.account_id === accountId);
      expect(mine).to.include({ name, timezone: 'Asia/Shanghai', credit_limit: '100' });
      expect(accounts.map((a) => a.name)).to.include('default');
    });

    it('an account name is unique: a second create with it fails and prints nothing', async () => {
      const again = await admin('account', 'create', '--name', name);
      expect(again.code).to.not.equal(0);
      expect(again.stdout).to.equal('');
      expect(again.stderr).to.include('name');
    });

    it('user create (viewer) → that user signs in through REST and can read but not change', async () => {
      const email = `cli-viewer-${unique()}@example.com`;
      const password = `cli-pass-${unique()}`;
      const user = json(await admin('user', 'create', '--account', accountId, '--email', email, '--password', password, '--role', 'viewer'));
      expect(user).to.include({ account_id: accountId, email, role: 'viewer' });

      const login = await api(t, 'POST', '/api/v1/sessions', undefined, { email, password });
      expect(login.status, JSON.stringify(login.body)).to.equal(201);
      expect(login.body.user).to.include({ account_id: accountId, role: 'viewer' });
      expect((await api(t, 'GET', '/api/v1/keys', login.body.token)).status).to.equal(200);
      const create = await api(t, 'POST', '/api/v1/keys', login.body.token, { name: 'nope', dimension: '部门', model_scope: ['tsxt-general'] });
      expect(create.status).to.equal(403);
    });

    it('user create --password-stdin takes the password from standard input, keeping it out of the process list', async () => {
      const email = `cli-stdin-${unique()}@example.com`;
      const password = `cli-stdin-pass-${unique()}`;
      const run = await runAdminWithInput(databaseUrl, `${password}\n`, 'user', 'create', '--account', accountId, '--email', email, '--password-stdin', '--role', 'admin');
      expect(json(run)).to.include({ email, role: 'admin' });
      expect(run.stdout + run.stderr).not.to.contain(password);
      expect((await api(t, 'POST', '/api/v1/sessions', undefined, { email, password })).status).to.equal(201);

      const both = await runAdminWithInput(databaseUrl, `${password}\n`, 'user', 'create', '--account', accountId, '--email', `x-${email}`, '--password-stdin', '--password', 'p', '--role', 'admin');
      expect(both.code).to.not.equal(0);
      expect(both.stderr).to.contain('not both');
      const empty = await runAdminWithInput(databaseUrl, '', 'user', 'create', '--account', accountId, '--email', `y-${email}`, '--password-stdin', '--role', 'admin');
      expect(empty.code).to.not.equal(0);
      expect(empty.stderr).to.contain('--password-stdin');
    });

    it('key-defaults set: new keys of the account get the rate limit, none lifts it', async () => {
      const { token } = await addUser(t, accountId, 'owner');
      const limit = { requests_per_minute: 30, tokens_per_minute: null, concurrent_requests: 2 };
      expect(json(await admin('key-defaults', 'set', '--account', accountId, '--rate-limit', JSON.stringify(limit)))).to.deep.equal({ rate_limit: limit });
      expect((await api(t, 'GET', '/api/v1/account/key-defaults', token)).body).to.deep.equal({ rate_limit: limit });
      expect(json(await admin('key-defaults', 'set', '--account', accountId, '--rate-limit', 'none'))).to.deep.equal({ rate_limit: null });
      const bad = await admin('key-defaults', 'set', '--account', accountId, '--rate-limit', '{"requests_per_minute":0}');
      expect(bad.code).to.not.equal(0);
      expect(bad.stderr).to.contain('requests_per_minute');
    });

    it('key rate-limit: sets one key\'s limit (the running gateway shows it), none lifts it, a bad budget is refused naming it', async () => {
      const { token } = await addUser(t, accountId, 'owner');
      const key = await createKey(t, token, { model_scope: ['tsxt-fast'] });
      const limit = { requests_per_minute: 30, tokens_per_minute: 200_000, concurrent_requests: 2 };
      const set = json(await admin('key', 'rate-limit', '--account', accountId, '--key', key.api_key_id, '--rate-limit', JSON.stringify(limit)));
      expect(set).to.include({ api_key_id: key.api_key_id });
      expect(set.rate_limit).to.deep.equal(limit);
      expect((await api(t, 'GET', `/api/v1/keys/${key.api_key_id}`, token)).body.rate_limit).to.deep.equal(limit);
      expect(json(await admin('key', 'rate-limit', '--account', accountId, '--key', key.api_key_id, '--rate-limit', 'none')).rate_limit).to.equal(null);
      expect((await api(t, 'GET', `/api/v1/keys/${key.api_key_id}`, token)).body.rate_limit).to.equal(null);
      const bad = await admin('key', 'rate-limit', '--account', accountId, '--key', key.api_key_id, '--rate-limit', '{"concurrent_requests":-1}');
      expect(bad.code).to.not.equal(0);
      expect(bad.stderr).to.contain('concurrent_requests');
    });

    it('credit-limit set 5.5, then none: the running gateway shows each at once', async () => {
      const { token } = await addUser(t, accountId, 'owner');
      expect((await api(t, 'GET', '/api/v1/account/credit', token)).body.credit_limit).to.equal('100');

      const set = json(await admin('credit-limit', 'set', '--account', accountId, '--amount', '5.5'));
      expect(set).to.include({ account_id: accountId, credit_limit: '5.5' });
      expect((await api(t, 'GET', '/api/v1/account/credit', token)).body).to.include({ credit_limit: '5.5', remaining: '5.5' });

      const lifted = json(await admin('credit-limit', 'set', '--account', accountId, '--amount', 'none'));
      expect(lifted.credit_limit).to.equal(null);
      expect((await api(t, 'GET', '/api/v1/account/credit', token)).body).to.include({ credit_limit: null, remaining: null });

      // Each change is audited as the operator.
      const { pool } = await testDatabase();
      const events = await pool.query<{ actor: string; changes: unknown }>(
        `select actor, changes from audit_events where account_id = $1 and action = 'account.credit_limit_set' order by created_at`,
        [accountId],
      );
      expect(events.rows.map((r) => r.actor)).to.deep.equal(['operator-cli', 'operator-cli']);
    });

    it('a credit limit set through the CLI suspends the keys of an account already over it', async () => {
      const owner = await createAccount(t);
      const key = await api(t, 'POST', '/api/v1/keys', owner.token, { name: 'capped', dimension: '部门', model_scope: ['tsxt-general'] });
      expect(key.body.status).to.equal('active');
      // A limit of 0 is reached by any month-to-date amount, even zero.
      json(await admin('credit-limit', 'set', '--account', owner.accountId, '--amount', '0'));
      let status = '';
      for (let i = 0; i < 50 && status !== 'suspended'; i++) {
        status = (await api(t, 'GET', `/api/v1/keys/${key.body.api_key_id}`, owner.token)).body.status;
        if (status !== 'suspended') await new Promise((r) => setTimeout(r, 100));
      }
      const shown = await api(t, 'GET', `/api/v1/keys/${key.body.api_key_id}`, owner.token);
      expect(shown.body).to.include({ status: 'suspended', suspended_reason: 'credit_limit' });
      json(await admin('credit-limit', 'set', '--account', owner.accountId, '--amount', 'none'));
      expect((await api(t, 'GET', `/api/v1/keys/${key.body.api_key_id}`, owner.token)).body.status).to.equal('active');
    });
  });

  describe('bad input: non-zero exit, a message naming the problem, nothing on stdout', () => {
    let accountId: string;
    const refusedEmail = `refused-${unique()}@example.com`;
    before(async () => {
      accountId = json(await admin('account', 'create', '--name', `cli-bad-${unique()}`, '--credit-limit', '7')).account_id;
    });

    const CASES: Array<{ title: string; args: () => string[]; names: RegExp }> = [
      { title: 'an unknown command', args: () => ['account', 'delete', '--name', 'x'], names: /unknown command "account delete"/ },
      { title: 'no command at all', args: () => [], names: /no command/ },
      { title: 'account create without --name', args: () => ['account', 'create', '--timezone', 'UTC'], names: /--name/ },
      { title: 'account create with a bad --timezone', args: () => ['account', 'create', '--name', `tz-${unique()}`, '--timezone', 'Mars/Olympus_Mons'], names: /timezone/ },
      { title: 'account create with a bad --credit-limit', args: () => ['account', 'create', '--name', `cl-${unique()}`, '--credit-limit', 'lots'], names: /credit-limit/ },
      { title: 'an unknown option', args: () => ['account', 'list', '--verbose'], names: /--verbose/ },
      {
        title: 'user create with a bad --role',
        args: () => ['user', 'create', '--account', accountId, '--email', refusedEmail, '--password', 'long-enough-pw', '--role', 'superuser'],
        names: /role/,
      },
      {
        title: 'user create for an unknown account',
        args: () => ['user', 'create', '--account', 'acc_01AAAAAAAAAAAAAAAAAAAAAAAA', '--email', `u-${unique()}@example.com`, '--password', 'long-enough-pw', '--role', 'viewer'],
        names: /account/,
      },
      { title: 'credit-limit set with a bad --amount', args: () => ['credit-limit', 'set', '--account', accountId, '--amount', 'five'], names: /amount/ },
      { title: 'credit-limit set with a negative --amount', args: () => ['credit-limit', 'set', '--account', accountId, '--amount=-5'], names: /amount/ },
    ];

    // The processes are independent: run them side by side, check them one by one.
    const runs = new Map<string, AdminRun>();
    before(async () => {
      const results = await Promise.all(CASES.map((c) => admin(...c.args())));
      CASES.forEach((c, i) => runs.set(c.title, results[i]!));
    });

    for (const c of CASES) {
      it(c.title, () => {
        const run = runs.get(c.title)!;
        expect(run.code, run.stderr).to.not.equal(0);
        expect(run.stdout).to.equal('');
        // The first line says what is wrong (the usage text after it lists every option anyway).
        expect(run.stderr.split('\n')[0]).to.match(c.names);
        expect(run.stderr).to.not.match(/^\s+at .+:\d+:\d+\)?$/m);
      });
    }

    it('the refused commands changed nothing', async () => {
      expect((await t.app.services.accounts.get(accountId)).creditLimitMicros).to.equal(7_000_000);
      expect(await t.app.services.sessions.findUser(refusedEmail)).to.equal(null);
      const names = (await t.app.services.accounts.list()).map((a) => a.name);
      expect(names.filter((n) => /^(tz|cl)-/.test(n))).to.deep.equal([]);
    });
  });
});
