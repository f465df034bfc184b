// Issue 31: the webhook outbox survives a kill -9. A key event is committed
// with its change; a gateway killed before its dispatcher sent it leaves the
// delivery in the table, and the next process on the database sends it,
// signed, once.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { verifySignature } from '../../../src/domain/webhooks/webhook-signer';
import { freePort, testDatabase } from '../../support/db';
import { createKeyWithToken, killGateway, startGateway, waitReady } from '../../support/gateway-process';
import { startWebhookReceiver } from '../../support/webhook-receiver';

describe('durability: the webhook outbox across kill -9', function () {
  this.timeout(120_000);

  it('a key.suspended committed before the kill is delivered by the next process, signed, once', async () => {
    const db = await testDatabase();
    const receiver = await startWebhookReceiver();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = `tsxs_test_${randomBytes(16).toString('hex')}`;
    const env = { DATABASE_URL: db.url, PORT: String(port), GATEWAY_BOOTSTRAP_TOKEN: token, GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1' };
    const authorized = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // The first process's dispatcher stays idle (its first round would come after a minute).
    let gateway = await startGateway({ ...env, GATEWAY_WEBHOOK_POLL_MS: '60000' });
    try {
      await waitReady(base, gateway);
      const hook = (await (
        await fetch(`${base}/api/v1/account/webhooks`, { method: 'POST', headers: authorized, body: JSON.stringify({ url: `${receiver.origin}/k9`, events: ['key.suspended'] }) })
      ).json()) as { webhook_id: string; secret: string };
      const key = await createKeyWithToken(base, token, `k9-hook-${randomBytes(4).toString('hex')}`, ['tsxt-fast']);
      expect((await fetch(`${base}/api/v1/keys/${key.api_key_id}/suspend`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status).to.equal(200);
      killGateway(gateway);
      await gateway.exited;
      expect(receiver.received).to.have.length(0);
      const pending = await db.pool.query<{ state: string }>('select state from webhook_deliveries where webhook_id = $1', [hook.webhook_id]);
      expect(pending.rows.map((r) => r.state)).to.deep.equal(['pending']);

      gateway = await startGateway({ ...env, GATEWAY_WEBHOOK_POLL_MS: '100' });
      await waitReady(base, gateway);
      const deadline = Date.now() + 10_000;
      while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      // Another round or two: a delivered event is not sent again.
      await new Promise((r) => setTimeout(r, 400));
      expect(receiver.received).to.have.length(1);
      const delivered = receiver.received[0]!;
      expect(JSON.parse(delivered.body)).to.deep.include({ type: 'key.suspended' });
      expect(verifySignature(hook.secret, delivered.body, delivered.headers['x-gateway-signature'] as string, Math.floor(Date.now() / 1000))).to.equal(true);
      const rows = await db.pool.query<{ state: string; attempts: number }>('select state, attempts from webhook_deliveries where webhook_id = $1', [hook.webhook_id]);
      expect(rows.rows).to.deep.equal([{ state: 'delivered', attempts: 1 }]);
    } finally {
      killGateway(gateway);
      await receiver.close();
    }
  });
});
