import { expect } from 'chai';
import { getIntrospectionQuery } from 'graphql';
import { createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { createKeyGql, dataOf, errorCode, gql } from './graphql-client';

/** A query whose deepest field sits `depth` levels down, reached through a named and an inline fragment. */
function queryOfDepth(depth: number): string {
  // viewer (1) → account (2) via fragment A → depth - 2 nested made-up fields via fragment B.
  let nested = 'leaf';
  for (let level = depth - 3; level > 0; level -= 1) nested = `f${level} { ${nested} }`;
  return `query Deep { viewer { ...A } }
    fragment A on ViewerType { ... on ViewerType { account { ...B } } }
    fragment B on AccountType { ${nested} }`;
}

describe('GraphQL errors and limits', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t);
  });
  after(async () => t.close());

  describe('query depth', () => {
    it('rejects a query deeper than 8 levels, counting fragments, with query_too_deep', async () => {
      const response = await gql(t, queryOfDepth(9), {}, owner.token);
      expect(response.status).to.equal(400);
      expect(response.data).to.equal(null);
      const deep = response.errors?.find((e) => e.extensions.code === 'query_too_deep');
      expect(deep, response.text).not.to.equal(undefined);
      expect(deep!.message).to.include('9 levels');
    });

    it('lets 8 levels through the depth rule', async () => {
      const response = await gql(t, queryOfDepth(8), {}, owner.token);
      // The made-up fields are still refused by the schema, but not for depth.
      expect(response.errors?.map((e) => e.extensions.code)).not.to.include('query_too_deep');
    });

    it('answers the deepest real query and the full introspection query the console codegen sends', async () => {
      const settlement = await gql(t, '{ settlement(month: "2020-01") { keys { tiers { tier } } } }', {}, owner.token);
      expect(dataOf(settlement).settlement.keys).to.deep.equal([]);
      const introspection = await gql(t, getIntrospectionQuery(), {}, owner.token);
      const types = dataOf(introspection).__schema.types.map((type: { name: string }) => type.name);
      expect(types).to.include.members(['ApiKeyType', 'CreateApiKeyPayload', 'CreateApiKeyInput', 'UpdateApiKeyInput', 'SafeInt', 'JSON']);
    });
  });

  describe('error mapping', () => {
    it('turns an unexpected failure into internal_error with no internals, and logs it with the request id', async () => {
      const { apiKey } = await createKeyGql(t, owner.token);
      const { pool } = await testDatabase();
      // Beyond 2^53 the count cannot be served exactly: the SafeInt scalar refuses it mid-execution.
      await pool.query('update api_keys set used_tokens = $2 where id = $1', [apiKey.id, '1152921504606846976']);
      try {
        const response = await gql(t, 'query($id: ID!) { apiKey(id: $id) { id usedTokens } }', { id: apiKey.id }, owner.token);
        expect(errorCode(response)).to.equal('internal_error');
        expect(response.errors![0]).to.deep.include({ message: 'Internal server error', path: ['apiKey', 'usedTokens'] });
        expect(response.errors![0]!.extensions).to.deep.equal({ code: 'internal_error', http: 500 });
        expect(response.text).not.to.match(/SafeInt|stack|at .*\.ts/);
        const logged = t.logs.filter((line) => line.includes('graphql operation failed'));
        expect(logged.length).to.be.greaterThan(0);
        expect(JSON.parse(logged.at(-1)!)).to.have.property('request_id').that.matches(/^req_/);
      } finally {
        await pool.query('update api_keys set used_tokens = 0 where id = $1', [apiKey.id]);
      }
    });

    it('refuses arguments PostgreSQL cannot store (U+0000, half a surrogate pair) with invalid_field naming them', async () => {
      const fresh = await createAccount(t);
      const create = 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { secret } }';
      const input = { name: 'ok', dimension: '部门', modelScope: ['tsxt-general'] };
      for (const [bad, what] of [
        [{ ...input, name: 'a\u0000b' }, /U\+0000/],
        [{ ...input, name: 'a\ud800' }, /surrogate/],
      ] as const) {
        const response = await gql(t, create, { input: bad }, fresh.token);
        expect(errorCode(response), response.text).to.equal('invalid_field');
        expect(response.errors![0]!.extensions).to.deep.include({ field: 'input.name', http: 400 });
        expect(response.errors![0]!.message).to.match(what);
      }
      const list = await gql(t, '{ apiKeys { total } }', {}, fresh.token);
      expect(dataOf(list).apiKeys.total, 'nothing was created').to.equal(0);
    });

    it('keeps graphql-js client errors with snake_case codes', async () => {
      expect(errorCode(await gql(t, '{ apiKeys { nope } }', {}, owner.token))).to.equal('graphql_validation_failed');
      expect(errorCode(await gql(t, '{ apiKeys { ', {}, owner.token))).to.equal('graphql_parse_failed');
      const badVariable = await gql(t, 'query($id: ID!) { apiKey(id: $id) { id } }', {}, owner.token);
      expect(errorCode(badVariable)).to.equal('bad_user_input');
    });

    it('answers a body that is not JSON in the GraphQL error shape', async () => {
      const response = await fetch(`${t.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
        body: '{"query": ',
      });
      expect(response.status).to.equal(400);
      const body = (await response.json()) as { errors: Array<{ extensions: { code: string } }> };
      expect(body.errors[0]!.extensions.code).to.equal('malformed_body');
    });
  });

  describe('transport', () => {
    it('serves queries over GET, but not mutations', async () => {
      const headers = { authorization: `Bearer ${owner.token}`, 'apollo-require-preflight': 'true' };
      const query = await fetch(`${t.baseUrl}/graphql?query=${encodeURIComponent('{ models { name } }')}`, { headers });
      expect(query.status).to.equal(200);
      const body = (await query.json()) as { data: { models: Array<{ name: string }> } };
      expect(body.data.models.map((m) => m.name)).to.include('tsxt-general');

      const mutation = await fetch(`${t.baseUrl}/graphql?query=${encodeURIComponent('mutation { logout }')}`, { headers });
      expect(mutation.status).to.equal(405);
    });

    it('refuses a cross-site simple request (CSRF prevention)', async () => {
      const response = await fetch(`${t.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({ query: 'mutation { logout }' }),
      });
      expect(response.status).to.equal(400);
      expect(dataOf(await gql(t, '{ viewer { email } }', {}, owner.token)).viewer.email, 'the session survived').to.equal(owner.email);
    });
  });
});
