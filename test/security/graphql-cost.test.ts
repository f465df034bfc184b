// GraphQL query cost (issue 15): one console session, even a viewer's, cannot
// send a query that reads the database hundreds of times over, nor make the
// gateway parse a document past 5,000 tokens or read a body past 64 KB
// (issue 28).
import { expect } from 'chai';
import { addUser, createAccount, startTestApp, type TestApp } from '../support/app';

describe('security: GraphQL query cost', function () {
  this.timeout(30_000);
  let t: TestApp;
  let viewerToken: string;
  let ownerToken: string;
  before(async () => {
    t = await startTestApp();
    const owner = await createAccount(t);
    ownerToken = owner.token;
    viewerToken = (await addUser(t, owner.accountId, 'viewer')).token;
  });
  after(async () => {
    await t?.close();
  });

  const post = async (query: string, token: string, variables: Record<string, unknown> = {}) => {
    const response = await fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> } };
  };

  it('refuses 200 aliases of a wide usageRecords query with 400 query_too_costly, before reading anything', async () => {
    const aliases = Array.from({ length: 200 }, (_, i) => `r${i}: usageRecords(start: "2020-01-01", end: "2030-12-31") { total items { requestId model totalTokens } }`).join('\n');
    const { status, body } = await post(`{ ${aliases} }`, viewerToken);
    expect(status).to.equal(400);
    expect(body.errors?.[0]?.extensions?.code).to.equal('query_too_costly');
    expect(body.errors?.[0]?.message).to.match(/at most 20000/);
    expect(body.data).to.equal(undefined);
  });

  it('counts a page size given by a variable at the largest allowed', async () => {
    const query = `query($n: Int!) { ${Array.from({ length: 8 }, (_, i) => `p${i}: usageRecords(pageSize: $n) { items { requestId model status totalTokens amount } }`).join(' ')} }`;
    expect((await post(query, ownerToken, { n: 10 })).status).to.equal(400);
  });

  it('answers the console keys page and the largest single page of usage records', async () => {
    const keys = await post(
      'query($p: Int!) { apiKeys(page: 1, pageSize: $p) { total page pageSize items { id name dimension status suspendedReason usedTokens modelScope expiresAt lastUsedAt createdAt secretHint } } creditStatus { creditLimit currency month monthUsed suspended } }',
      ownerToken,
      { p: 100 },
    );
    expect(keys.status, JSON.stringify(keys.body.errors)).to.equal(200);
    const page = await post('{ usageRecords(pageSize: 500) { total items { requestId apiKeyId model routedModel form stream thinking status totalTokens amount } } }', ownerToken);
    expect(page.status, JSON.stringify(page.body.errors)).to.equal(200);
  });

  it('parses at most 5,000 tokens of a signed-in query and reads at most 64 KB of its body, naming each limit', async () => {
    const tokens = await post(`{ ${'__typename '.repeat(5_100)}}`, viewerToken);
    expect(tokens.status).to.equal(400);
    expect(tokens.body.errors?.[0]?.extensions?.code).to.equal('graphql_parse_failed');
    expect(tokens.body.errors?.[0]?.message).to.include('5000 tokens');
    const big = await post(`{ __typename } # ${'x'.repeat(70 * 1024)}`, viewerToken);
    expect(big.status).to.equal(413);
    expect(big.body.errors?.[0]?.extensions?.code).to.equal('body_too_large');
    expect(big.body.errors?.[0]?.message).to.include('64 KB, the most a console request may send');
    // Under both: a long comment is not tokens.
    expect((await post(`{ __typename } # ${'x'.repeat(60 * 1024)}`, viewerToken)).status).to.equal(200);
  });
});
