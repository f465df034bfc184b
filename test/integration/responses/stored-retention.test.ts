// What happens to stored responses over time and by the control plane:
// retention purge, an owner's purge (REST and GraphQL; viewers and admins
// refused), cancelled keys, usage records naming their response, and the
// stored context counted in the credit reservation of a follow-up.
import { expect } from 'chai';
import { addUser, api, createAccount, createKey, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { operator } from '../billing/billing-support';
import { KEY_SCOPE, micros, startKeyedGateway, usageDetail, type KeyedGateway } from '../../e2e/e2e-support';

describe('stored responses: retention, purge, keys, usage and credit', function () {
  this.timeout(60_000);
  let gateway: KeyedGateway;
  let t: TestApp;

  before(async () => {
    gateway = await startKeyedGateway();
    t = gateway.t;
  });

  after(async () => {
    await gateway?.close();
  });

  const create = (secret: string, body: Record<string, unknown>) => api(t, 'POST', '/v1/responses', secret, body);
  const newAccount = async (): Promise<{ owner: TestAccount; secret: string; keyId: string }> => {
    const owner = await createAccount(t);
    const key = await createKey(t, owner.token, { model_scope: KEY_SCOPE });
    return { owner, secret: key.api_key, keyId: key.api_key_id };
  };
  const rows = async (sql: string, params: unknown[]) => Number((await (await testDatabase()).pool.query<{ n: unknown }>(sql, params)).rows[0]!.n);

  it('purges responses and conversations past their expiry, batch-wise, and only those', async () => {
    const { secret, owner } = await newAccount();
    const old = await create(secret, { model: 'm-mock', input: 'old' });
    const fresh = await create(secret, { model: 'm-mock', input: 'fresh' });
    const conversation = await api(t, 'POST', '/v1/conversations', secret, { items: [{ role: 'user', content: 'old talk' }] });
    const pool = (await testDatabase()).pool;
    await pool.query(`update stored_responses set expires_at = now() - interval '1 second' where id = $1`, [old.body.id]);
    await pool.query(`update conversations set expires_at = now() - interval '1 second' where id = $1`, [conversation.body.id]);
    // Expired is gone for the caller at once, purged or not.
    expect((await api(t, 'GET', `/v1/responses/${old.body.id}`, secret)).status).to.equal(404);
    expect((await create(secret, { model: 'm-mock', previous_response_id: old.body.id, input: 'x' })).body.error.param).to.equal('previous_response_id');

    const purged = await t.app.services.stateful.responses.purgeExpired();
    expect(purged).to.be.at.least(2);
    expect(await rows('select count(*) as n from stored_responses where id = $1', [old.body.id])).to.equal(0);
    expect(await rows('select count(*) as n from stored_items where response_id = $1', [old.body.id])).to.equal(0);
    expect(await rows('select count(*) as n from conversation_items where conversation_id = $1', [conversation.body.id])).to.equal(0);
    expect((await api(t, 'GET', `/v1/responses/${fresh.body.id}`, secret)).status).to.equal(200);
    expect(owner.accountId).to.be.a('string');
  });

  it('keeps a response for GATEWAY_RESPONSES_RETENTION_DAYS (expires_at = created_at + the retention)', async () => {
    const { secret } = await newAccount();
    const response = await create(secret, { model: 'm-mock', input: 'how long?' });
    const days = await rows(`select extract(day from expires_at - created_at)::text as n from stored_responses where id = $1`, [response.body.id]);
    expect(Number(days)).to.equal(t.config.responsesRetentionDays);
    expect(t.config.responsesRetentionDays).to.equal(30);
  });

  it('lets an owner purge the account (REST and GraphQL), refuses viewers and admins, audits it, and keeps other accounts', async () => {
    const { owner, secret } = await newAccount();
    const bystander = await newAccount();
    const kept = await create(bystander.secret, { model: 'm-mock', input: 'not yours' });
    const first = await create(secret, { model: 'm-mock', input: 'one' });
    await create(secret, { model: 'm-mock', input: 'two' });
    await api(t, 'POST', '/v1/conversations', secret, {});

    const viewer = await addUser(t, owner.accountId, 'viewer');
    const admin = await addUser(t, owner.accountId, 'admin');
    for (const who of [viewer, admin]) {
      expect((await api(t, 'DELETE', '/api/v1/account/stored-responses', who.token)).status).to.equal(403);
      const graphql = await api(t, 'POST', '/graphql', who.token, { query: 'mutation { purgeStoredResponses }' });
      expect(graphql.body.errors?.[0]?.extensions, JSON.stringify(graphql.body)).to.deep.include({ code: 'owner_only', http: 403 });
    }
    expect((await api(t, 'GET', `/v1/responses/${first.body.id}`, secret)).status).to.equal(200);

    const rest = await api(t, 'DELETE', '/api/v1/account/stored-responses', owner.token);
    expect(rest.status).to.equal(200);
    expect(rest.body).to.deep.equal({ deleted: 3 });
    expect((await api(t, 'GET', `/v1/responses/${first.body.id}`, secret)).status).to.equal(404);
    expect((await api(t, 'GET', `/v1/responses/${kept.body.id}`, bystander.secret)).status).to.equal(200);

    await create(secret, { model: 'm-mock', input: 'three' });
    const graphql = await api(t, 'POST', '/graphql', owner.token, { query: 'mutation { purgeStoredResponses }' });
    expect(graphql.body).to.deep.equal({ data: { purgeStoredResponses: 1 } });

    const audit = await api(t, 'GET', '/api/v1/audit-events', owner.token);
    const actions = (audit.body.items as Array<{ action: string }>).map((event) => event.action);
    expect(actions.filter((action) => action === 'stored_responses.purge')).to.have.length(2);
  });

  it("keeps a cancelled key's stored responses; the usage record names the response", async () => {
    const { owner, secret, keyId } = await newAccount();
    const response = await create(secret, { model: 'm-mock', input: 'keep me' });
    const detail = await usageDetail(t, owner.token, keyId);
    const record = detail.items.find((item) => (item as { response_id?: string | null }).response_id === response.body.id);
    expect(record, 'usage record naming the response').to.not.equal(undefined);
    expect(record!.form).to.equal('responses');

    const graphql = await api(t, 'POST', '/graphql', owner.token, {
      query: 'query($key: ID!, $s: String!, $e: String!) { usageRecords(apiKeyId: $key, start: $s, end: $e) { items { requestId responseId } } }',
      variables: { key: keyId, s: new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10), e: new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10) },
    });
    expect(graphql.body.errors, JSON.stringify(graphql.body.errors)).to.equal(undefined);
    expect(graphql.body.data.usageRecords.items.map((item: { responseId: string }) => item.responseId)).to.include(response.body.id);

    const cancelled = await api(t, 'DELETE', `/api/v1/keys/${keyId}`, owner.token);
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.be.oneOf([200, 204]);
    expect(await rows('select count(*) as n from stored_responses where id = $1', [response.body.id])).to.equal(1);
    const other = await createKey(t, owner.token, { model_scope: KEY_SCOPE });
    expect((await api(t, 'GET', `/v1/responses/${response.body.id}`, other.api_key)).status, 'another key of the same account reads it').to.equal(200);
  });

  it('reserves the stored context as input: a long stored turn makes a follow-up exceed a tight credit limit (429), a fresh call still passes', async () => {
    const { owner, secret } = await newAccount();
    const long = `${'The quick brown fox jumps over the lazy dog. '.repeat(6_000)}`;
    const first = await create(secret, { model: 'm-mock', input: long, max_output_tokens: 64 });
    expect(first.status).to.equal(200);
    const used = micros((await api(t, 'GET', '/api/v1/account/credit', owner.token)).body.month_used);
    // Room for a short call's worst case, far from the ~270 KB context's.
    await t.app.services.accounts.setCreditLimit(operator(owner.accountId), Number(used) + 100_000);

    const fresh = await create(secret, { model: 'm-mock', input: 'Short question?', max_output_tokens: 64 });
    expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
    const follow = await create(secret, { model: 'm-mock', previous_response_id: first.body.id, input: 'Short question?', max_output_tokens: 64 });
    expect(follow.status, JSON.stringify(follow.body)).to.equal(429);
    expect(follow.body.error).to.include({ type: 'rate_limit_error', code: 'credit_limit_reached' });
  });
});
