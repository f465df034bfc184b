// The key secret (docs/architecture.md §14): shown once in the create answer, then never
// again: not in any other answer, audit event or log line, and stored only as
// its SHA-256 with a display hint.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { api, createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { rawRequest, zoneToday } from './support';

describe('REST control plane: the key secret', () => {
  let t: TestApp;
  let owner: TestAccount;
  let sessionToken: string;
  let secret: string;
  let keyId: string;
  let created: Record<string, unknown>;
  /** Raw text of every answer after the create one. */
  const answers: Array<{ what: string; status: number; text: string }> = [];

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t);
    // A session made through REST, so its token travels the whole HTTP path.
    const login = await api(t, 'POST', '/api/v1/sessions', undefined, { email: owner.email, password: owner.password });
    expect(login.status).to.equal(201);
    sessionToken = login.body.token;

    const response = await rawRequest(t, 'POST', '/api/v1/keys', sessionToken, { name: 'secret-keeper', dimension: '业务线', model_scope: ['tsxt-general'] });
    expect(response.status, response.text).to.equal(201);
    created = JSON.parse(response.text) as Record<string, unknown>;
    secret = created.api_key as string;
    keyId = created.api_key_id as string;

    // Use the key on the data plane (right and wrong), then run every control-plane read and write.
    const dataPlane = async (headers: Record<string, string>) => {
      const r = await fetch(`${t.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
        body: JSON.stringify({ model: 'tsxt-general', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }),
      });
      return { status: r.status, text: await r.text() };
    };
    const used = await dataPlane({ 'x-api-key': secret });
    answers.push({ what: 'data plane call with the key', ...used });
    answers.push({ what: 'data plane call with a mangled key', ...(await dataPlane({ authorization: `Bearer ${secret.slice(0, -1)}x` })) });

    const today = zoneToday('UTC');
    const steps: Array<[string, string, string, unknown?]> = [
      ['list', 'GET', '/api/v1/keys'],
      ['list filtered', 'GET', '/api/v1/keys?status=active&q=secret'],
      ['get', 'GET', `/api/v1/keys/${keyId}`],
      ['update', 'PUT', `/api/v1/keys/${keyId}`, { name: 'secret-keeper-2', dimension: '成本中心' }],
      ['suspend', 'POST', `/api/v1/keys/${keyId}/suspend`],
      ['resume', 'POST', `/api/v1/keys/${keyId}/resume`],
      ['usage', 'GET', `/api/v1/keys/${keyId}/usage?start=${today}&end=${today}`],
      ['usage detail', 'GET', `/api/v1/usage?start=${today}&end=${today}`],
      ['usage export', 'GET', `/api/v1/usage/export?start=${today}&end=${today}`],
      ['a 400', 'PUT', `/api/v1/keys/${keyId}`, { name: '' }],
      ['cancel', 'DELETE', `/api/v1/keys/${keyId}`],
      ['audit events', 'GET', '/api/v1/audit-events?page_size=200'],
      ['audit events of the key', 'GET', `/api/v1/audit-events?api_key_id=${keyId}`],
    ];
    for (const [what, method, path, body] of steps) answers.push({ what, ...(await rawRequest(t, method, path, sessionToken, body)) });
    // A failed login carrying the session token as password must not echo or log it either.
    answers.push({ what: 'failed login', ...(await rawRequest(t, 'POST', '/api/v1/sessions', undefined, { email: owner.email, password: sessionToken })) });
  });

  after(async () => {
    await t.close();
  });

  it('the create answer is 201 with api_key: tsxt- and 51 characters', () => {
    expect(secret).to.be.a('string');
    expect(secret.startsWith('tsxt-')).to.equal(true);
    expect(secret).to.have.length(51);
    expect(secret).to.match(/^tsxt-[0-9A-Za-z]{46}$/);
    expect(created.status).to.equal('active');
  });

  it('the key works on the data plane (so the secret really is that key)', () => {
    const used = answers.find((a) => a.what === 'data plane call with the key')!;
    expect(used.status, used.text).to.equal(200);
  });

  it('every later answer was served and none contains the secret or any long piece of it', () => {
    const body = secret.slice('tsxt-'.length);
    for (const answer of answers) {
      expect(answer.status, `${answer.what}: ${answer.text}`).to.be.lessThan(500);
      expect(answer.text, answer.what).to.not.include(secret);
      // Neither the random part nor either half of it.
      for (const piece of [body, body.slice(0, 23), body.slice(23)]) expect(answer.text, answer.what).to.not.include(piece);
    }
    const mutated = answers.filter((a) => ['update', 'suspend', 'resume', 'cancel', 'get', 'list'].includes(a.what));
    expect(mutated).to.have.length(6);
    for (const answer of mutated) expect(JSON.stringify(JSON.parse(answer.text))).to.not.include('api_key"');
  });

  it('audit events exist for the key and carry no secret', () => {
    const events = JSON.parse(answers.find((a) => a.what === 'audit events of the key')!.text) as { items: Array<{ action: string }> };
    expect(events.items.map((e) => e.action)).to.include.members(['key.create', 'key.update', 'key.suspend', 'key.resume', 'key.cancel']);
  });

  it('the logs contain neither the secret nor the session token nor the password', () => {
    const logs = t.logs.join('');
    expect(t.logs.length, 'the app should have logged something').to.be.greaterThan(0);
    expect(logs).to.not.include(secret);
    expect(logs).to.not.include(secret.slice('tsxt-'.length, 30));
    expect(logs).to.not.include(sessionToken);
    expect(logs).to.not.include(owner.token);
    expect(logs).to.not.include(owner.password);
  });

  it('the database holds the secret only as its SHA-256', async () => {
    const { pool } = await testDatabase();
    const row = (await pool.query<{ secret_hash: string; secret_hint: string }>('select secret_hash, secret_hint from api_keys where id = $1', [keyId])).rows[0];
    expect(row?.secret_hash).to.equal(createHash('sha256').update(secret).digest('hex'));

    // Every row of every table, as text: the secret and its random part appear nowhere.
    const tables = await pool.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
    );
    expect(tables.rows.map((r) => r.table_name)).to.include.members(['api_keys', 'audit_events']);
    for (const { table_name } of tables.rows) {
      const dump = await pool.query<{ row: string }>(`select t::text as row from "${table_name}" t`);
      for (const { row } of dump.rows) {
        expect(row, table_name).to.not.include(secret.slice('tsxt-'.length));
      }
    }
  });

  it('secret_hint looks like tsxt-abcd…wxyz and matches the secret', () => {
    const hint = created.secret_hint as string;
    expect(hint).to.match(/^tsxt-[0-9A-Za-z]{4}…[0-9A-Za-z]{4}$/);
    expect(hint).to.equal(`${secret.slice(0, 9)}…${secret.slice(-4)}`);
    const got = JSON.parse(answers.find((a) => a.what === 'get')!.text) as { secret_hint: string };
    expect(got.secret_hint).to.equal(hint);
  });

  it('every key gets a different secret', async () => {
    const secrets = new Set<string>([secret]);
    for (let i = 0; i < 5; i++) {
      const r = await api(t, 'POST', '/api/v1/keys', sessionToken, { name: `another-${i}`, dimension: '部门', model_scope: ['tsxt-general'] });
      expect(r.status).to.equal(201);
      secrets.add(r.body.api_key);
    }
    expect(secrets.size).to.equal(6);
  });
});
