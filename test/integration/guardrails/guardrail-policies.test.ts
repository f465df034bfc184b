// Per-account guardrail policies (docs/architecture.md §6) over REST and the operator CLI:
// effective policy = built-in default ← catalog ← account; changes (and
// resets back to the default) are validated, audited, and reach the data
// plane of every running process.
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import { runAdmin } from '../../support/admin-cli';
import { addUser, api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { answerText, call, catalogFile, requestBody, stopReason } from '../../support/data-plane';
import { testDatabase } from '../../support/db';
import { startFakeOpenAI, type FakeUpstream } from '../../support/fake-upstreams';

const RULES = ['cn-id-card', 'cn-mobile', 'bank-card', 'email', 'api-secret', 'prompt-injection', 'block-list'];
/** cn-mobile as an account without an override sees it: the built-in default (the catalog leaves it alone). */
const CN_MOBILE_DEFAULT = { rule: 'cn-mobile', category: 'pii', default_policy: 'redact', policy: 'redact', overridden: false, updated_at: null };

describe('guardrail policies per account (REST, CLI)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let openai: FakeUpstream;
  let owner: TestAccount;

  before(async () => {
    openai = await startFakeOpenAI();
    t = await startTestApp({
      env: { GP_OPENAI_KEY: 'sk-openai-gp' },
      catalog: catalogFile({
        providers: { gpt: { type: 'openai', base_url: openai.baseUrl, api_key_env: 'GP_OPENAI_KEY' } },
        models: [{ name: 'p-gpt', routes: { standard: [{ provider: 'gpt', model: 'gpt-p' }] } }],
        // The catalog layer: e-mail addresses only flagged, secrets (a category) blocked.
        guardrails: { policies: { email: 'flag', secret: 'block' } },
      }),
    });
    owner = await createAccount(t);
  });

  after(async () => {
    await t?.close();
    await openai?.close();
  });

  const list = async (token: string) => {
    const response = await api(t, 'GET', '/api/v1/account/guardrails', token);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.items as Array<Record<string, unknown>>;
  };

  /** A new account with a key, and its chat call whose upstream answers `text`. */
  const accountAsking = async (text: string) => {
    const account = await createAccount(t);
    const { api_key: apiKey } = await createKey(t, account.token, { model_scope: ['p-gpt'] });
    const ask = async () => {
      openai.script({ text });
      return call(t, 'chat', apiKey, requestBody('chat', 'p-gpt', 'Anything to pass on?'));
    };
    return { account, ask };
  };

  /** The answer once it is `expected`, or the last one after ~2 s: another process's change arrives by NOTIFY. */
  const eventualAnswer = async (ask: () => ReturnType<typeof call>, expected: string) => {
    let answer = '';
    for (let attempt = 0; attempt < 40 && answer !== expected; attempt++) {
      if (attempt > 0) await delay(50);
      answer = answerText('chat', await ask());
    }
    return answer;
  };

  it('lists every rule with its category, default and effective policy', async () => {
    const items = await list(owner.token);
    expect(items.map((item) => item.rule)).to.deep.equal(RULES);
    const byRule = Object.fromEntries(items.map((item) => [item.rule, item]));
    expect(byRule['cn-mobile']).to.deep.equal(CN_MOBILE_DEFAULT);
    // Catalog overrides show as the default, by rule and by category.
    expect(byRule.email).to.include({ default_policy: 'flag', policy: 'flag' });
    expect(byRule['api-secret']).to.include({ category: 'secret', default_policy: 'block', policy: 'block' });
    expect(byRule['prompt-injection']).to.include({ category: 'injection', policy: 'flag' });
    expect(byRule['block-list']).to.include({ category: 'blocklist', policy: 'block' });
  });

  it('sets one rule for the account (owner and admin), audited, leaving other accounts alone', async () => {
    const account = await createAccount(t);
    const admin = await addUser(t, account.accountId, 'admin');
    const set = await api(t, 'PUT', '/api/v1/account/guardrails/email', admin.token, { policy: 'redact' });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body).to.include({ rule: 'email', category: 'pii', default_policy: 'flag', policy: 'redact', overridden: true });
    expect(Date.parse(set.body.updated_at)).to.be.closeTo(Date.now(), 60_000);

    const again = await api(t, 'PUT', '/api/v1/account/guardrails/email', account.token, { policy: 'off' });
    expect(again.body).to.include({ policy: 'off' });
    expect((await list(account.token)).find((item) => item.rule === 'email')).to.include({ policy: 'off', overridden: true });
    expect((await list(owner.token)).find((item) => item.rule === 'email')).to.include({ policy: 'flag', overridden: false });

    const audit = await api(t, 'GET', '/api/v1/audit-events', account.token);
    const events = (audit.body.items as Array<Record<string, any>>).filter((event) => event.action === 'guardrail.policy_set');
    expect(events.map((event) => [event.actor, event.changes])).to.deep.equal([
      [account.email, { email: { from: 'redact', to: 'off' } }],
      [admin.email, { email: { from: 'flag', to: 'redact' } }],
    ]);
  });

  it('refuses a viewer (403) and changes nothing', async () => {
    const viewer = await addUser(t, owner.accountId, 'viewer');
    const response = await api(t, 'PUT', '/api/v1/account/guardrails/cn-mobile', viewer.token, { policy: 'off' });
    expect(response.status).to.equal(403);
    expect(response.body.error.code).to.equal('read_only_role');
    expect((await list(viewer.token)).find((item) => item.rule === 'cn-mobile')).to.include({ policy: 'redact' });
  });

  const invalid: Array<[string, string, unknown, string]> = [
    ['an unknown rule', 'e-mail', { policy: 'off' }, 'rule'],
    ['a category instead of a rule', 'pii', { policy: 'off' }, 'rule'],
    ['an unknown policy', 'email', { policy: 'mask' }, 'policy'],
    ['a missing policy', 'email', {}, 'policy'],
    ['a policy of the wrong type', 'email', { policy: 1 }, 'policy'],
  ];
  for (const [title, rule, body, field] of invalid) {
    it(`answers 400 naming the field for ${title}`, async () => {
      const response = await api(t, 'PUT', `/api/v1/account/guardrails/${rule}`, owner.token, body);
      expect(response.status).to.equal(400);
      expect(response.body.error.field).to.equal(field);
      expect(response.body.error.message).to.match(field === 'rule' ? /cn-mobile/ : /block, redact, flag, off/);
    });
  }

  it('needs a session (401)', async () => {
    expect((await api(t, 'GET', '/api/v1/account/guardrails')).status).to.equal(401);
    expect((await api(t, 'PUT', '/api/v1/account/guardrails/email', undefined, { policy: 'off' })).status).to.equal(401);
    expect((await api(t, 'DELETE', '/api/v1/account/guardrails/email')).status).to.equal(401);
  });

  it('applies a change to the account’s next call at once', async () => {
    const { account, ask } = await accountAsking('Write to ops@example.com.');
    expect(answerText('chat', await ask())).to.equal('Write to ops@example.com.');
    await api(t, 'PUT', '/api/v1/account/guardrails/email', account.token, { policy: 'redact' });
    expect(answerText('chat', await ask())).to.equal('Write to [REDACTED:email].');
    await api(t, 'PUT', '/api/v1/account/guardrails/email', account.token, { policy: 'block' });
    expect(stopReason('chat', await ask())).to.equal('content_filter');
  });

  describe('reset to the default', () => {
    const audited = async (token: string) => {
      const audit = await api(t, 'GET', '/api/v1/audit-events', token);
      return (audit.body.items as Array<Record<string, any>>).filter((event) => event.action === 'guardrail.policy_reset');
    };

    it('drops the override: the rule follows the default again on the account’s next call, audited', async () => {
      const { account, ask } = await accountAsking('Write to ops@example.com.');
      const admin = await addUser(t, account.accountId, 'admin');
      await api(t, 'PUT', '/api/v1/account/guardrails/email', account.token, { policy: 'redact' });
      expect(answerText('chat', await ask())).to.equal('Write to [REDACTED:email].');

      const reset = await api(t, 'DELETE', '/api/v1/account/guardrails/email', admin.token);
      expect(reset.status, JSON.stringify(reset.body)).to.equal(200);
      // The catalog's `flag` for e-mail, not the built-in `redact`.
      expect(reset.body).to.deep.equal({ rule: 'email', category: 'pii', default_policy: 'flag', policy: 'flag', overridden: false, updated_at: null });
      expect((await list(account.token)).find((item) => item.rule === 'email')).to.deep.equal(reset.body);
      expect(answerText('chat', await ask())).to.equal('Write to ops@example.com.');

      expect((await audited(account.token)).map((event) => [event.actor, event.changes])).to.deep.equal([
        [admin.email, { email: { from: 'redact', to: 'flag' } }],
      ]);
    });

    it('is a 200 no-op without an override, writing no audit event', async () => {
      const account = await createAccount(t);
      const first = await api(t, 'DELETE', '/api/v1/account/guardrails/cn-mobile', account.token);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body).to.deep.equal(CN_MOBILE_DEFAULT);

      // A second reset after a set and a reset changes nothing either.
      await api(t, 'PUT', '/api/v1/account/guardrails/cn-mobile', account.token, { policy: 'off' });
      await api(t, 'DELETE', '/api/v1/account/guardrails/cn-mobile', account.token);
      const again = await api(t, 'DELETE', '/api/v1/account/guardrails/cn-mobile', account.token);
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal(first.body);
      expect((await audited(account.token)).map((event) => event.changes)).to.deep.equal([{ 'cn-mobile': { from: 'off', to: 'redact' } }]);
    });

    for (const [title, rule, code] of [
      ['an unknown rule', 'e-mail', 'unknown_guardrail_rule'],
      ['a category instead of a rule', 'pii', 'unknown_guardrail_rule'],
      ['a rule name longer than any rule', 'x'.repeat(65), 'invalid_field'],
    ] as const) {
      it(`answers 400 naming rule for ${title}`, async () => {
        const response = await api(t, 'DELETE', `/api/v1/account/guardrails/${rule}`, owner.token);
        expect(response.status).to.equal(400);
        expect(response.body.error).to.include({ code, field: 'rule' });
      });
    }

    it('refuses a viewer (403) and keeps the override', async () => {
      const account = await createAccount(t);
      const viewer = await addUser(t, account.accountId, 'viewer');
      await api(t, 'PUT', '/api/v1/account/guardrails/cn-mobile', account.token, { policy: 'off' });
      const response = await api(t, 'DELETE', '/api/v1/account/guardrails/cn-mobile', viewer.token);
      expect(response.status).to.equal(403);
      expect(response.body.error.code).to.equal('read_only_role');
      expect((await list(viewer.token)).find((item) => item.rule === 'cn-mobile')).to.include({ policy: 'off', overridden: true });
      expect(await audited(account.token)).to.deep.equal([]);
    });
  });

  describe('operator CLI', () => {
    const admin = async (...args: string[]) => runAdmin((await testDatabase()).url, ...args);

    it('guardrail set reaches the running gateway through NOTIFY', async () => {
      const { account, ask } = await accountAsking('Call 13912345678.');
      // The gateway has built and cached this account's engine.
      expect(answerText('chat', await ask())).to.equal('Call [REDACTED:cn-mobile].');

      const run = await admin('guardrail', 'set', '--account', account.accountId, '--rule', 'cn-mobile', '--policy', 'flag');
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.include({ account_id: account.accountId, rule: 'cn-mobile', policy: 'flag', overridden: true });

      // Another process made the change: only the NOTIFY tells this one.
      expect(await eventualAnswer(ask, 'Call 13912345678.')).to.equal('Call 13912345678.');
      const audit = await api(t, 'GET', '/api/v1/audit-events', account.token);
      expect(audit.body.items[0]).to.include({ actor: 'operator-cli', action: 'guardrail.policy_set' });
    });

    it('guardrail reset reaches the running gateway through NOTIFY', async () => {
      const { account, ask } = await accountAsking('Call 13912345678.');
      await api(t, 'PUT', '/api/v1/account/guardrails/cn-mobile', account.token, { policy: 'flag' });
      // The gateway has built and cached this account's engine with the override.
      expect(answerText('chat', await ask())).to.equal('Call 13912345678.');

      const run = await admin('guardrail', 'reset', '--account', account.accountId, '--rule', 'cn-mobile');
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.equal({ account_id: account.accountId, ...CN_MOBILE_DEFAULT });

      // Another process made the change: only the NOTIFY tells this one.
      expect(await eventualAnswer(ask, 'Call [REDACTED:cn-mobile].')).to.equal('Call [REDACTED:cn-mobile].');
      const audit = await api(t, 'GET', '/api/v1/audit-events', account.token);
      expect(audit.body.items[0]).to.deep.include({
        actor: 'operator-cli',
        action: 'guardrail.policy_reset',
        changes: { 'cn-mobile': { from: 'flag', to: 'redact' } },
      });
    });

    it('guardrail reset names a bad rule or a missing one', async () => {
      const bad = await admin('guardrail', 'reset', '--account', owner.accountId, '--rule', 'phone');
      expect(bad.code).to.equal(1);
      expect(JSON.parse(bad.stderr).error).to.include({ code: 'unknown_guardrail_rule', field: 'rule' });
      const missing = await admin('guardrail', 'reset', '--account', owner.accountId);
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.contain('--rule is required');
    });

    it('guardrail set names a bad rule or policy', async () => {
      const bad = await admin('guardrail', 'set', '--account', owner.accountId, '--rule', 'phone', '--policy', 'flag');
      expect(bad.code).to.equal(1);
      expect(JSON.parse(bad.stderr).error).to.include({ code: 'unknown_guardrail_rule', field: 'rule' });
      const missing = await admin('guardrail', 'set', '--account', owner.accountId, '--rule', 'email');
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.contain('--policy is required');
    });
  });
});
