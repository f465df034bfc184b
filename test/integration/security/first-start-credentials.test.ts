// First-start credentials (issue 28): stdout is the log stream, so the first
// owner's password and session token never go there; they are written to a
// file only the gateway's OS user can read, and the log names the file.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { freePort, scratchDatabase } from '../../support/db';
import { killGateway, startGateway, waitReady } from '../../support/gateway-process';

describe('security: first-start credentials', function () {
  this.timeout(180_000);

  it('go to <GATEWAY_DATA_DIR>/first-start-credentials.txt (mode 0600), never into the log stream', async () => {
    const scratch = await scratchDatabase(`gw_first_${process.pid}_${Date.now().toString(36)}`, loadConfig().databaseUrl);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gw-first-start-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const gateway = await startGateway({ DATABASE_URL: scratch.url, PORT: String(port), GATEWAY_DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    try {
      await waitReady(base, gateway);
      const file = path.join(dataDir, 'first-start-credentials.txt');
      const deadline = Date.now() + 30_000;
      while (!gateway.stdout().includes('first-start-credentials.txt') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));

      expect((await stat(file)).mode & 0o777, 'file mode').to.equal(0o600);
      const text = await readFile(file, 'utf8');
      const password = /^password: (\S+)$/m.exec(text)?.[1];
      const token = /^session token \(Authorization: Bearer …\): (\S+)$/m.exec(text)?.[1];
      expect(password, text).to.be.a('string');
      expect(token, text).to.be.a('string');

      // The credentials work…
      const keys = await fetch(`${base}/api/v1/keys`, { headers: { authorization: `Bearer ${token}` } });
      expect(keys.status).to.equal(200);
      const login = await fetch(`${base}/api/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'owner@gateway.local', password }),
      });
      expect(login.status).to.equal(201);

      // …and the log stream (stdout) and stderr name the file but hold neither secret.
      const logs = gateway.stdout() + gateway.stderr();
      expect(logs).to.contain(file);
      expect(logs).not.to.contain(password!);
      expect(logs).not.to.contain(token!);
    } finally {
      killGateway(gateway);
      await gateway.exited;
      await scratch.dispose();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
