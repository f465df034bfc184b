// GraphQL query cost (issues 15 and 28): one console session, even a
// viewer's, cannot send a query that reads the database hundreds of times
// over, nor, with many allowed ones at once, slow down other tenants, nor make
// the gateway parse a document past 5,000 tokens or read a body past 64 KB.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { USAGE_RECORD_COLUMNS } from '../billing/billing-support';
import { addUser, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';

describe('security: GraphQL query cost', function () {
  this.timeout(30_000);
  let t: TestApp;
  let viewerToken: string;
  let ownerToken: string;
  let accountId: string;
  before(async () => {
    t = await startTestApp();
    const owner = await createAccount(t);
    ownerToken = owner.token;
    accountId = owner.accountId;
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

  it('refuses 200 aliases of a wide usageRecords query with 400 too_many_aliases and query_too_costly, before reading anything', async () => {
    const aliases = Array.from({ length: 200 }, (_, i) => `r${i}: usageRecords(start: "2020-01-01", end: "2030-12-31") { total items { requestId model totalTokens } }`).join('\n');
    const { status, body } = await post(`{ ${aliases} }`, viewerToken);
    expect(status).to.equal(400);
    expect(body.errors?.map((e) => e.extensions?.code)).to.deep.equal(['too_many_aliases', 'query_too_costly']);
    expect(body.errors?.[0]?.message).to.match(/^usageRecords: asked for more than 5 times/);
    expect(body.errors?.[1]?.message).to.match(/more than 20000/);
    expect(body.data).to.equal(undefined);
  });

  it('prices round trips: four reports of 3 round trips and two small fields pass, eight reports with tiny pages do not, five aliases of one field do', async () => {
    const month = new Date().toISOString().slice(0, 7);
    const fifteen = `{ ${Array.from({ length: 2 }, (_, i) => `u${i}: usageRecords(pageSize: 1) { total } s${i}: settlement(month: "${month}") { month }`).join(' ')} c: creditStatus { month } v: viewer { id } }`;
    expect((await post(fifteen, viewerToken)).status).to.equal(200);
    const twentyFour = `{ ${Array.from({ length: 4 }, (_, i) => `u${i}: usageRecords(pageSize: 1) { total } s${i}: settlement(month: "${month}") { month }`).join(' ')} }`;
    const refused = await post(twentyFour, viewerToken);
    expect(refused.status).to.equal(400);
    expect(refused.body.errors?.map((e) => e.extensions?.code)).to.deep.equal(['query_too_costly']);
    const five = await post(`{ ${Array.from({ length: 5 }, (_, i) => `c${i}: creditStatus { month monthUsed }`).join(' ')} }`, viewerToken);
    expect(five.status, JSON.stringify(five.body.errors)).to.equal(200);
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

  it("a viewer's 10,000-alias flood and many concurrent heavy-but-allowed queries leave another tenant's calls near baseline, and /readyz 200", async function () {
    this.timeout(180_000);
    // The flooding account has a real month of usage to read: 30,000 records.
    const db = await testDatabase();
    const key = await createKey(t, ownerToken);
    await db.pool.query(
      `insert into usage_records (${USAGE_RECORD_COLUMNS})
       select 'use_' || $3 || lpad(g::text, 6, '0'), 'req_' || $3 || lpad(g::text, 6, '0'), $1, $2, 'messages', 'tsxt-general', 'sim-medium', 'sim',
         'standard', 0.5, '[]', false, false, 'ok', null, 'no_thinking', 10, 100, 20, 10, 100, 20, 10, 201, 160, 130, 371, '{}', 20, 10,
         now() - (g * interval '50 milliseconds')
       from generate_series(1, 30000) as g`,
      [accountId, key.api_key_id, randomBytes(4).toString('hex')],
    );
    const other = await createAccount(t);
    const { api_key: otherKey } = await createKey(t, other.token);

    const otherCall = async (): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${t.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': otherKey, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'tsxt-general', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await response.text();
      expect(response.status).to.equal(200);
      return performance.now() - started;
    };
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const timeCalls = async (n: number): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < n; i += 1) times.push(await otherCall());
      return times;
    };
    await timeCalls(5); // warm-up
    const baseline = median(await timeCalls(20));

    const month = new Date().toISOString().slice(0, 7);
    const flood = `{${Array.from({ length: 10_000 }, (_, i) => `a${i.toString(36)}:creditStatus{month}`).join(' ')}}`;
    // Allowed (cost ≈ 18,000, no field more than twice) and heavy: two pages of 200 over 30,000 rows with totals, two settlements, two credit statuses.
    const heavy = `{ ${[0, 1]
      .map((i) => `u${i}: usageRecords(start: "2020-01-01", end: "2030-12-31", page: ${i + 1}, pageSize: 200) { total totalAmount items { requestId totalTokens } }
        s${i}: settlement(month: "${month}") { totalAmount keys { apiKeyId totalAmount } } c${i}: creditStatus { monthUsed reserved }`)
      .join(' ')} }`;
    const outcomes = { flood: [] as string[], heavy: new Map<string, number>() };
    let flooding = true;
    const floodLoop = async () => {
      while (flooding) {
        const { status, body } = await post(flood, viewerToken);
        // 400 naming the limits; a GraphQL body limit smaller than this query (413) refuses it too.
        outcomes.flood.push(status === 400 ? `400 ${body.errors?.map((e) => e.extensions?.code).join(',')}` : String(status));
        // Parsing and validating 250 KB takes the event loop ~0.2 s whatever the answer; a tight loop of them is the HTTP edge's to limit (body and parse limits), not the database's.
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    const heavyLoop = async () => {
      while (flooding) {
        const { status, body } = await post(heavy, viewerToken);
        const outcome = status === 200 && !body.errors ? 'answered' : `${status} ${body.errors?.[0]?.extensions?.code}`;
        outcomes.heavy.set(outcome, (outcomes.heavy.get(outcome) ?? 0) + 1);
        // A refused client tries again soon (sooner than the retry-after it was given).
        if (outcome !== 'answered') await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const readiness: number[] = [];
    const readyLoop = async () => {
      while (flooding) {
        readiness.push((await fetch(`${t.baseUrl}/readyz`)).status);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const loops = [floodLoop(), readyLoop(), ...Array.from({ length: 20 }, heavyLoop)];
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = await timeCalls(20);
    flooding = false;
    await Promise.all(loops);

    const heavyOutcomes = Object.fromEntries(outcomes.heavy);
    process.stdout.write(
      `      other tenant's /v1/messages median: ${baseline.toFixed(1)} ms alone, ${median(during).toFixed(1)} ms under the flood (max ${[...during].sort((a, b) => b - a)[0]!.toFixed(0)} ms); ` +
        `${outcomes.flood.length} floods, heavy queries ${JSON.stringify(heavyOutcomes)}, /readyz ${readiness.length}× ${[...new Set(readiness)].join('/')}\n`,
    );
    expect(outcomes.flood.length).to.be.greaterThan(0);
    for (const outcome of outcomes.flood) expect(['400 too_many_aliases,query_too_costly', '413']).to.include(outcome);
    // The allowed queries were answered, turned away at once by the per-account limit, or (a slow box) at their deadline: never a server failure.
    expect(heavyOutcomes.answered ?? 0).to.be.greaterThan(0);
    for (const outcome of Object.keys(heavyOutcomes)) expect(['answered', '200 too_many_requests', '200 control_plane_timeout']).to.include(outcome);
    expect(readiness.length).to.be.greaterThan(0);
    expect(readiness.every((status) => status === 200)).to.equal(true);
    // Generous: a loaded 2-core box. Before issue 28 the same flood took another tenant's calls to 8.4 s.
    expect(median(during)).to.be.below(Math.max(baseline * 5, baseline + 250));
  });
});
