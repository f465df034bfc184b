// A viewer may read but not change anything (docs/architecture.md §14). The
// changes whose bodies the domain checks (not the published contract) are
// refused with 403 read_only_role whatever the body holds: a body of the
// wrong fields or types gets no 400 telling a read-only caller the rules,
// and a well-formed one changes nothing.
import { expect } from 'chai';
import { addUser, api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';

describe('control plane: a viewer is refused before its body is read', function () {
  this.timeout(60_000);
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1' } });
  });
  after(async () => t?.close());

  it('answers 403 read_only_role to every REST change with a body, well-formed or not, and the owner sees nothing changed', async () => {
    const owner = await createAccount(t);
    const viewer = await addUser(t, owner.accountId, 'viewer');
    const key = await createKey(t, owner.token, { name: 'finance' });
    const changes: Array<[string, string, unknown[]]> = [
      ['POST', '/api/v1/keys', [{ name: 42, dimension: [] }, { name: 'ok', dimension: '部门', extra: 1 }, { name: 'viewer-made', dimension: '部门' }]],
      ['PUT', `/api/v1/keys/${key.api_key_id}`, [{ name: 7 }, { name: 'renamed' }]],
      ['POST', `/api/v1/keys/${key.api_key_id}/rotate`, [{ grace_hours: 1 }, {}]],
      ['PUT', '/api/v1/account/key-defaults', [{ rate_limit: 'fast' }, { other: 1 }, { rate_limit: null }]],
      ['PUT', '/api/v1/account/credit-alerts', [{ thresholds: '80' }, { thresholds: [80], more: true }, { thresholds: [50, 100] }]],
      ['POST', '/api/v1/account/webhooks', [{ url: 5, events: 'all' }, { url: 'http://127.0.0.1:9/hook', events: ['credit.threshold_reached'] }]],
      ['PUT', '/api/v1/account/guardrails/email', [{ policy: 1 }, { policy: 'block' }]],
    ];
    for (const [method, path, bodies] of changes) {
      for (const body of bodies) {
        const response = await api(t, method, path, viewer.token, body);
        expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).to.equal(403);
        expect(response.body.error.code, `${method} ${path} ${JSON.stringify(body)}`).to.equal('read_only_role');
      }
    }
    const keys = await api(t, 'GET', '/api/v1/keys', owner.token);
    expect(keys.body.items.map((k: { name: string }) => k.name)).to.deep.equal(['finance']);
    expect((await api(t, 'GET', '/api/v1/account/key-defaults', owner.token)).body).to.deep.equal({ rate_limit: null });
    expect((await api(t, 'GET', '/api/v1/account/credit-alerts', owner.token)).body.thresholds).to.deep.equal([80, 100]);
    expect((await api(t, 'GET', '/api/v1/account/webhooks', owner.token)).body.items).to.deep.equal([]);
    const email = (await api(t, 'GET', '/api/v1/account/guardrails', owner.token)).body.items.find((r: { rule: string }) => r.rule === 'email');
    expect(email.overridden).to.equal(false);
  });
});
