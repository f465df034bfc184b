// The GraphQL side of per-account guardrail policies: the same service as
// REST, so the same rules, answers and errors.
import { expect } from 'chai';
import { addUser, api, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { dataOf, errorCode, gql } from './graphql-client';

const POLICIES = 'query { guardrailPolicies { rule category defaultPolicy policy overridden updatedAt } }';
const SET = `mutation($rule: String!, $policy: String!) {
  setGuardrailPolicy(rule: $rule, policy: $policy) { rule category defaultPolicy policy overridden updatedAt }
}`;
const RESET = `mutation($rule: String!) {
  resetGuardrailPolicy(rule: $rule) { rule category defaultPolicy policy overridden updatedAt }
}`;

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const camelize = (item: Record<string, unknown>) => Object.fromEntries(Object.entries(item).map(([k, v]) => [camel(k), v]));

describe('GraphQL guardrail policies', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t);
  });
  after(async () => t.close());

  it('guardrailPolicies lists every rule as REST does', async () => {
    const { guardrailPolicies } = dataOf(await gql(t, POLICIES, {}, owner.token));
    const rest = await api(t, 'GET', '/api/v1/account/guardrails', owner.token);
    expect(guardrailPolicies).to.deep.equal(rest.body.items.map(camelize));
    expect(guardrailPolicies.find((rule: any) => rule.rule === 'prompt-injection')).to.include({
      category: 'injection',
      defaultPolicy: 'flag',
      policy: 'flag',
      overridden: false,
      updatedAt: null,
    });
  });

  it('setGuardrailPolicy changes the account’s policy for one rule', async () => {
    const { setGuardrailPolicy } = dataOf(await gql(t, SET, { rule: 'prompt-injection', policy: 'block' }, owner.token));
    expect(setGuardrailPolicy).to.include({ rule: 'prompt-injection', defaultPolicy: 'flag', policy: 'block', overridden: true });
    const { guardrailPolicies } = dataOf(await gql(t, POLICIES, {}, owner.token));
    expect(guardrailPolicies.find((rule: any) => rule.rule === 'prompt-injection')).to.include({ policy: 'block' });
  });

  it('resetGuardrailPolicy brings one rule back to its default, audited once', async () => {
    const account = await createAccount(t);
    dataOf(await gql(t, SET, { rule: 'prompt-injection', policy: 'block' }, account.token));
    const { resetGuardrailPolicy } = dataOf(await gql(t, RESET, { rule: 'prompt-injection' }, account.token));
    expect(resetGuardrailPolicy).to.deep.equal({
      rule: 'prompt-injection',
      category: 'injection',
      defaultPolicy: 'flag',
      policy: 'flag',
      overridden: false,
      updatedAt: null,
    });
    const rest = await api(t, 'GET', '/api/v1/account/guardrails', account.token);
    expect(camelize(rest.body.items.find((rule: any) => rule.rule === 'prompt-injection'))).to.deep.equal(resetGuardrailPolicy);

    // Without an override it answers the same and changes nothing.
    expect(dataOf(await gql(t, RESET, { rule: 'prompt-injection' }, account.token)).resetGuardrailPolicy).to.deep.equal(resetGuardrailPolicy);
    const audit = await api(t, 'GET', '/api/v1/audit-events', account.token);
    const resets = (audit.body.items as Array<Record<string, any>>).filter((event) => event.action === 'guardrail.policy_reset');
    expect(resets.map((event) => event.changes)).to.deep.equal([{ 'prompt-injection': { from: 'block', to: 'flag' } }]);
  });

  it('names the argument at fault', async () => {
    const rule = await gql(t, SET, { rule: 'phone', policy: 'block' }, owner.token);
    expect(errorCode(rule)).to.equal('unknown_guardrail_rule');
    expect(rule.errors![0]!.extensions).to.include({ field: 'rule', http: 400 });
    const policy = await gql(t, SET, { rule: 'email', policy: 'hide' }, owner.token);
    expect(errorCode(policy)).to.equal('invalid_field');
    expect(policy.errors![0]!.extensions).to.include({ field: 'policy', http: 400 });
    const reset = await gql(t, RESET, { rule: 'phone' }, owner.token);
    expect(errorCode(reset)).to.equal('unknown_guardrail_rule');
    expect(reset.errors![0]!.extensions).to.include({ field: 'rule', http: 400 });
  });

  it('refuses viewers and callers without a session', async () => {
    const viewer = await addUser(t, owner.accountId, 'viewer');
    expect(errorCode(await gql(t, SET, { rule: 'email', policy: 'off' }, viewer.token))).to.equal('read_only_role');
    expect(errorCode(await gql(t, RESET, { rule: 'prompt-injection' }, viewer.token))).to.equal('read_only_role');
    expect(dataOf(await gql(t, POLICIES, {}, viewer.token)).guardrailPolicies).to.have.length(7);
    expect(errorCode(await gql(t, POLICIES))).to.equal('missing_session');
    expect(errorCode(await gql(t, RESET, { rule: 'email' }))).to.equal('missing_session');
  });
});
