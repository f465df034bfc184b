// Guardrail rule names are an allow-list on every way in (REST, GraphQL, the
// operator CLI, the catalog): names every JavaScript object answers to
// (`__proto__`, `constructor`, `toString`, …) were taken for rules by an `in`
// check, and `PUT /api/v1/account/guardrails/__proto__` answered 200 and
// stored a row. Each is now a 400 naming the field, and nothing is stored or
// audited.
import { expect } from 'chai';
import { runAdmin } from '../../support/admin-cli';
import { api, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { gql } from '../graphql/graphql-client';
import { parseCatalog } from '../../../src/routing/catalog';
import { resolvePolicies } from '../../../src/guardrails';
import { catalogJson, mockProvider } from '../../support/mock-catalog';

const OBJECT_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf', 'propertyIsEnumerable'];

const SET = 'mutation($rule: String!, $policy: String!) { setGuardrailPolicy(rule: $rule, policy: $policy) { rule policy } }';
const RESET = 'mutation($rule: String!) { resetGuardrailPolicy(rule: $rule) { rule policy } }';

describe('guardrail rule names are an allow-list: __proto__, constructor, toString…', function () {
  this.timeout(120_000);
  let t: TestApp;
  let owner: TestAccount;
  let before0: unknown;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t);
    before0 = (await api(t, 'GET', '/api/v1/account/guardrails', owner.token)).body;
  });

  after(async () => {
    await t?.close();
  });

  /** Nothing of the account's changed: no stored override, no audit event, the same list. */
  async function nothingStored(): Promise<void> {
    const db = await testDatabase();
    const rows = await db.pool.query('select rule from account_guardrail_policies where account_id = $1', [owner.accountId]);
    expect(rows.rows).to.deep.equal([]);
    const audit = await api(t, 'GET', '/api/v1/audit-events', owner.token);
    expect((audit.body.items as Array<{ action: string }>).filter((event) => event.action.startsWith('guardrail.'))).to.deep.equal([]);
    expect((await api(t, 'GET', '/api/v1/account/guardrails', owner.token)).body).to.deep.equal(before0);
  }

  it('REST: PUT and DELETE answer 400 naming rule', async () => {
    for (const name of OBJECT_NAMES) {
      const path = `/api/v1/account/guardrails/${encodeURIComponent(name)}`;
      for (const [method, body] of [['PUT', { policy: 'off' }], ['DELETE', undefined]] as const) {
        const response = await api(t, method, path, owner.token, body);
        expect(response.status, `${method} ${name}: ${JSON.stringify(response.body)}`).to.equal(400);
        expect(response.body.error).to.include({ code: 'unknown_guardrail_rule', field: 'rule' });
      }
    }
    await nothingStored();
  });

  it('GraphQL: setGuardrailPolicy and resetGuardrailPolicy answer a bad-input error naming rule', async () => {
    for (const name of OBJECT_NAMES) {
      for (const [query, variables] of [
        [SET, { rule: name, policy: 'off' }],
        [RESET, { rule: name }],
      ] as const) {
        const response = await gql(t, query, variables, owner.token);
        expect(response.data, response.text).to.equal(null);
        expect(response.errors?.[0]?.extensions, response.text).to.include({ field: 'rule' });
        expect(response.errors?.[0]?.extensions.code, response.text).to.not.equal('INTERNAL_SERVER_ERROR');
      }
    }
    await nothingStored();
  });

  it('operator CLI: guardrail set and reset exit 1 naming rule', async () => {
    const url = (await testDatabase()).url;
    for (const args of [
      ['guardrail', 'set', '--account', owner.accountId, '--rule', '__proto__', '--policy', 'off'],
      ['guardrail', 'set', '--account', owner.accountId, '--rule', 'constructor', '--policy', 'off'],
      ['guardrail', 'reset', '--account', owner.accountId, '--rule', 'toString'],
    ]) {
      const run = await runAdmin(url, ...args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).to.equal(1);
      expect(JSON.parse(run.stderr).error).to.include({ code: 'unknown_guardrail_rule', field: 'rule' });
    }
    await nothingStored();
  });

  it('the catalog and the policy resolver refuse them too', () => {
    for (const name of OBJECT_NAMES) {
      // JSON.parse makes "__proto__" an own key, as a catalog file would.
      const json = JSON.parse(JSON.stringify(catalogJson({ sim: mockProvider() }, { m: [{ provider: 'sim', model: 'm' }] })).replace('"providers"', `"guardrails":{"policies":{"${name}":"off"}},"providers"`));
      expect(() => parseCatalog(json, {}, 'catalog.json'), name).to.throw(/guardrails\.policies.*unknown guardrail rule/);
      expect(() => resolvePolicies(JSON.parse(`{"${name}":"off"}`)), name).to.throw(/Unknown guardrail rule/);
    }
  });
});
