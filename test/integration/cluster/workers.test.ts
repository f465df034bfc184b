// GATEWAY_WORKERS=2: one port, two worker processes on one database. A key
// change made through either worker reaches both at once (each has its own
// LISTEN/NOTIFY change feed), and SIGTERM drains both and exits 0.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { freePort, testDatabase } from '../../support/db';
import { killGateway, startGateway, waitReady } from '../../support/gateway-process';

interface Answer {
  status: number;
  worker: string | undefined;
  body: string;
}

/** One request on its own connection, so the cluster may hand it to any worker. */
function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent: false,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, worker: response.headers['x-gateway-worker'] as string | undefined, body: text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

describe('cluster: GATEWAY_WORKERS=2', function () {
  this.timeout(180_000);

  it('serves from both workers, refuses a suspended key on both, and exits 0 on SIGTERM', async () => {
    const db = await testDatabase();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = `tsxs_cluster_${randomBytes(16).toString('hex')}`;
    const gateway = await startGateway({ GATEWAY_WORKERS: '2', DATABASE_URL: db.url, PORT: String(port), GATEWAY_BOOTSTRAP_TOKEN: token });
    try {
      await waitReady(base, gateway, 90_000);
      const session = { authorization: `Bearer ${token}` };
      const created = await call(base, 'POST', '/api/v1/keys', session, {
        name: `cluster-${randomBytes(4).toString('hex')}`,
        dimension: '部门',
        model_scope: ['tsxt-fast'],
      });
      expect(created.status, created.body).to.equal(201);
      const key = JSON.parse(created.body) as { api_key: string; api_key_id: string };
      const message = { model: 'tsxt-fast', max_tokens: 32, messages: [{ role: 'user', content: 'hello' }] };
      const apiKey = { 'x-api-key': key.api_key };

      // Both workers answer, and each now holds the key in its cache.
      const served = new Set<string>();
      for (let i = 0; i < 40 && served.size < 2; i++) {
        const answer = await call(base, 'POST', '/v1/messages', apiKey, message);
        expect(answer.status, answer.body).to.equal(200);
        if (answer.worker) served.add(answer.worker);
      }
      expect([...served], 'workers that answered').to.have.length(2);

      const suspended = await call(base, 'POST', `/api/v1/keys/${key.api_key_id}/suspend`, session);
      expect(suspended.status, suspended.body).to.equal(200);
      // NOTIFY reaches the other worker's feed within milliseconds of the commit.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const refusedBy = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const answer = await call(base, 'POST', '/v1/messages', apiKey, message);
        expect(answer.status, `call ${i} after suspend (worker ${answer.worker}): ${answer.body}`).to.equal(403);
        expect(JSON.parse(answer.body)).to.have.nested.property('error.type', 'permission_error');
        if (answer.worker) refusedBy.add(answer.worker);
      }
      expect([...refusedBy], 'workers that refused').to.have.length(2);

      process.kill(gateway.child.pid!, 'SIGTERM');
      const code = await Promise.race([gateway.exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 60_000))]);
      expect(code, gateway.stderr()).to.equal(0);
    } finally {
      killGateway(gateway);
    }
  });
});
