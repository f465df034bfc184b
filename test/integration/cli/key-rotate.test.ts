// `npm run admin -- key rotate`: the operator's rotation, as a child process on
// the gateway's database; a running gateway sees it at once (NOTIFY).
import { expect } from 'chai';
import { runAdmin } from '../../support/admin-cli';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { call, requestBody } from '../../support/data-plane';
import { testDatabase } from '../../support/db';
import { eventually } from '../billing/billing-support';
import { auditEventsOf } from '../control-plane/support';

describe('operator CLI: key rotate', function () {
  this.timeout(90_000);
  let t: TestApp;
  let owner: TestAccount;
  let databaseUrl: string;

  before(async function () {
    this.timeout(120_000);
    t = await startTestApp();
    databaseUrl = (await testDatabase()).url;
  });
  after(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    owner = await createAccount(t);
  });

  const ask = (secret: string) => call(t, 'chat', secret, requestBody('chat', 'tsxt-general', 'Say hello.'));

  it('prints the successor with its secret once; the running gateway accepts it and keeps the old key through the grace', async () => {
    const old = await createKey(t, owner.token);
    expect((await ask(old.api_key)).status).to.equal(200);
    const run = await runAdmin(databaseUrl, 'key', 'rotate', '--account', owner.accountId, '--key', old.api_key_id, '--grace-hours', '2');
    expect(run.code, run.stderr).to.equal(0);
    const next = JSON.parse(run.stdout);
    expect(next).to.include({ name: old.name, rotated_from: old.api_key_id, status: 'active' });
    expect(next.api_key).to.match(/^tsxt-/);
    expect((await ask(next.api_key)).status).to.equal(200);
    expect((await ask(old.api_key)).status).to.equal(200);
    const previous = (await api(t, 'GET', `/api/v1/keys/${old.api_key_id}`, owner.token)).body;
    expect(previous.rotated_to).to.equal(next.api_key_id);
    expect(Date.parse(previous.cancels_at) - Date.now()).to.be.within(2 * 3600_000 - 60_000, 2 * 3600_000);
    const rotation = (await auditEventsOf(t, owner.token, old.api_key_id)).find((e) => e.action === 'key.rotate');
    expect(rotation?.actor).to.equal('operator-cli');
  });

  it('--grace-hours 0 suspends the old key on the running gateway at once', async () => {
    const old = await createKey(t, owner.token);
    expect((await ask(old.api_key)).status).to.equal(200);
    const run = await runAdmin(databaseUrl, 'key', 'rotate', '--account', owner.accountId, '--key', old.api_key_id, '--grace-hours', '0');
    expect(run.code, run.stderr).to.equal(0);
    await eventually(async () => expect((await ask(old.api_key)).status).to.equal(403), 3000, 20);
    expect((await ask(JSON.parse(run.stdout).api_key as string)).status).to.equal(200);
  });

  it('refuses a bad --grace-hours naming the field, and a key of another account as not found', async () => {
    const key = await createKey(t, owner.token);
    const bad = await runAdmin(databaseUrl, 'key', 'rotate', '--account', owner.accountId, '--key', key.api_key_id, '--grace-hours', 'soon');
    expect(bad.code).to.equal(1);
    expect(JSON.parse(bad.stderr).error).to.include({ field: 'grace_hours' });
    const stranger = await createAccount(t);
    const foreign = await runAdmin(databaseUrl, 'key', 'rotate', '--account', stranger.accountId, '--key', key.api_key_id);
    expect(foreign.code).to.equal(1);
    expect(JSON.parse(foreign.stderr).error).to.include({ code: 'key_not_found' });
    expect((await api(t, 'GET', `/api/v1/keys/${key.api_key_id}`, owner.token)).body).to.include({ rotated_to: null });
  });
});
