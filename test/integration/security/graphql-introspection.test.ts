// GraphQL introspection needs a console session (issue 15), and the
// validation errors' "Did you mean …" suggestions too (issue 28): an
// anonymous caller cannot map the control plane's schema.
import { expect } from 'chai';
import { getIntrospectionQuery } from 'graphql';
import { createAccount, startTestApp, type TestApp } from '../../support/app';

describe('security: GraphQL introspection', function () {
  this.timeout(30_000);
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  const post = (query: string, token?: string) =>
    fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query }),
    });

  it('refuses __schema and __type without a session: 401 missing_session, no schema in the answer', async () => {
    for (const query of [getIntrospectionQuery(), '{ __type(name: "ApiKey") { fields { name } } }', '{ a: __schema { queryType { name } } }']) {
      const response = await post(query);
      const body = (await response.json()) as { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> };
      expect(response.status, query.slice(0, 40)).to.equal(401);
      expect(body.errors?.[0]?.extensions?.code).to.equal('missing_session');
      expect(JSON.stringify(body)).not.to.contain('ApiKey');
    }
  });

  it('answers it with a session, and __typename needs none', async () => {
    const owner = await createAccount(t);
    const response = await post(getIntrospectionQuery(), owner.token);
    expect(response.status).to.equal(200);
    const body = (await response.json()) as { data: { __schema: { types: Array<{ name: string }> } } };
    expect(body.data.__schema.types.length).to.be.greaterThan(10);
    expect((await post('{ __typename }')).status).to.equal(200);
  });

  it('names no field, argument or type in "Did you mean" without a session (or with a dead one); a signed-in user gets the suggestion', async () => {
    const misspelt = ['{ modls { name } }', 'mutation { login(emial: "a@example.com", password: "x") { token } }', '{ viewer { acount { id } } }'];
    for (const query of misspelt) {
      for (const token of [undefined, 'tsxs_not_a_session']) {
        const response = await post(query, token);
        const text = await response.text();
        expect(response.status, query).to.equal(400);
        expect(text, query).to.match(/Cannot query field|Unknown argument/);
        expect(text, query).not.to.match(/Did you mean|"models"|"email"|"account"/);
      }
    }
    const owner = await createAccount(t);
    const signedIn = await (await post(misspelt[0]!, owner.token)).text();
    expect(signedIn).to.include('Did you mean \\"models\\"?');
  });
});
