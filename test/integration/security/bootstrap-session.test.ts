// The bootstrap session (issue 15): signing out with GATEWAY_BOOTSTRAP_TOKEN
// retires it for good; restarting the gateway neither revives nor extends it.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp } from '../../support/app';

describe('security: the bootstrap session', function () {
  this.timeout(60_000);

  it('stays signed out across restarts, and a restart does not extend a live one', async () => {
    const token = `tsxs_boot_${randomBytes(12).toString('hex')}`;
    const env = { GATEWAY_BOOTSTRAP_TOKEN: token };
    const keys = (baseUrl: string) => fetch(`${baseUrl}/api/v1/keys`, { headers: { authorization: `Bearer ${token}` } });

    const first = await startTestApp({ env });
    try {
      expect((await keys(first.baseUrl)).status).to.equal(200);
    } finally {
      await first.close();
    }
    const second = await startTestApp({ env });
    try {
      expect((await keys(second.baseUrl)).status, 'still live after a restart').to.equal(200);
      const out = await fetch(`${second.baseUrl}/api/v1/sessions/current`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      expect(out.status).to.equal(204);
      expect((await keys(second.baseUrl)).status).to.equal(401);
    } finally {
      await second.close();
    }
    const third = await startTestApp({ env });
    try {
      expect((await keys(third.baseUrl)).status, 'a restart does not revive it').to.equal(401);
      expect(third.logs.join('\n')).to.contain('stays retired');
      expect(third.logs.join('\n')).not.to.contain(token);
    } finally {
      await third.close();
    }
  });
});
