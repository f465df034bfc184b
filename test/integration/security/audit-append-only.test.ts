// The audit log is append-only for the gateway's own database role (issue 28):
// neither its metering pool nor its ORM connection can rewrite or erase it.
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';

describe('security: audit_events is append-only', function () {
  this.timeout(30_000);
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  const refusal = async (run: () => Promise<unknown>): Promise<string> => {
    try {
      await run();
    } catch (error) {
      return `${(error as { code?: string }).code}: ${(error as Error).message}`;
    }
    throw new Error('the statement was allowed');
  };

  it('refuses UPDATE, DELETE and TRUNCATE from the app connection, and keeps the event', async () => {
    const owner = await createAccount(t);
    const key = await createKey(t, owner.token);
    const db = await testDatabase();
    const where = [owner.accountId, key.api_key_id];
    const before = await db.pool.query(`select id, actor, action from audit_events where account_id = $1 and api_key_id = $2`, where);
    expect(before.rows.map((r) => r.action)).to.deep.equal(['key.create']);

    const update = await refusal(() => db.pool.query(`update audit_events set actor = 'nobody' where account_id = $1 and api_key_id = $2`, where));
    expect(update).to.match(/^42501: audit_events is append-only: UPDATE/);
    expect(await refusal(() => db.pool.query(`delete from audit_events where account_id = $1 and api_key_id = $2`, where))).to.match(/^42501: .*DELETE/);
    expect(await refusal(() => db.pool.query('truncate audit_events'))).to.match(/^42501: .*TRUNCATE/);
    // The ORM's connections (the control plane's) are the same role.
    expect(await refusal(() => db.orm.em.fork().getConnection().execute(`delete from audit_events where account_id = '${owner.accountId}'`))).to.match(/DELETE/);

    const after = await db.pool.query(`select id, actor, action from audit_events where account_id = $1 and api_key_id = $2`, where);
    expect(after.rows).to.deep.equal(before.rows);
    // Appending still works: the next mutation is audited.
    const suspended = await fetch(`${t.baseUrl}/api/v1/keys/${key.api_key_id}/suspend`, { method: 'POST', headers: { authorization: `Bearer ${owner.token}` } });
    expect(suspended.status).to.equal(200);
    const appended = await db.pool.query(`select action from audit_events where account_id = $1 and api_key_id = $2 order by created_at`, where);
    expect(appended.rows.map((r) => r.action)).to.deep.equal(['key.create', 'key.suspend']);
  });
});
