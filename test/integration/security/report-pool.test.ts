// Control-plane reports cannot starve metering (issue 15): usage and
// settlement reads run on their own small pool, and (issue 28) one account
// runs at most two control-plane requests at once, with 16 more waiting.
import { expect } from 'chai';
import type pg from 'pg';
import { api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';

describe('security: report reads on their own pool', function () {
  this.timeout(30_000);
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  it('answers data-plane calls while every report connection is taken; one account runs two reads, queues 16 and refuses the next with 429', async () => {
    const owner = await createAccount(t);
    const { api_key: apiKey } = await createKey(t, owner.token);
    // Take every connection of the report pool, as long-running reports would.
    const reportPool = (t.app.services.usage as unknown as { pool: pg.Pool }).pool;
    const held = await Promise.all(Array.from({ length: 4 }, () => reportPool.connect()));
    try {
      // Metering has its own pool: a call is answered and billed.
      const answered = await fetch(`${t.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'tsxt-general', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(answered.status).to.equal(200);

      // Two reads of this account wait for a connection, 16 more for a turn; the next is refused at once.
      const month = new Date().toISOString().slice(0, 7);
      const waiting = Array.from({ length: 18 }, () => api(t, 'GET', `/api/v1/settlements/${month}`, owner.token));
      while (t.app.services.controlPlane.load.waiting < 16) await new Promise((resolve) => setTimeout(resolve, 20));
      const next = await api(t, 'GET', `/api/v1/settlements/${month}`, owner.token);
      expect(next.status).to.equal(429);
      expect(next.body.error.code).to.equal('too_many_requests');
      expect(next.headers.get('retry-after')).to.equal('1');
      // Another account is not held up by this one's limit (it waits for a connection like the rest).
      held.pop()!.release();
      const other = await createAccount(t);
      expect((await api(t, 'GET', `/api/v1/settlements/${month}`, other.token)).status).to.equal(200);
      for (const client of held.splice(0)) client.release();
      for (const read of await Promise.all(waiting)) expect(read.status).to.equal(200);
    } finally {
      for (const client of held) client.release();
    }
  });
});
