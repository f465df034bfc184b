import net from 'node:net';
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';

/** Sends the headers of a POST with a large declared body and only its first bytes, keeping the request in flight. */
function holdBody(base: string, bytes: number, apiKey: string): Promise<net.Socket> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.write(
        `POST /v1/messages HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\nx-api-key: ${apiKey}\r\ncontent-length: ${bytes}\r\n\r\n{"model":`,
      );
      // The server has seen the headers (and taken the budget) once it is reading the body.
      setTimeout(() => resolve(socket), 150);
    });
    socket.on('error', reject);
  });
}

async function post(base: string, bytes: number, apiKey: string): Promise<Response> {
  const body = JSON.stringify({ model: 'tsxt-fast', max_tokens: 16, messages: [{ role: 'user', content: 'x'.repeat(Math.max(0, bytes - 90)) }] });
  return fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
    body,
  });
}

describe('request-body memory budget', () => {
  let t: TestApp;
  // The budget is taken once a caller is authenticated (a caller without a valid key gets 401 before any body is read).
  let apiKey: string;

  before(async () => {
    t = await startTestApp({ env: { GATEWAY_BODY_BUDGET_MB: '1' } });
    const owner = await createAccount(t);
    apiKey = (await createKey(t, owner.token, { model_scope: ['tsxt-fast'] })).api_key;
  });
  after(async () => t.close());

  it('answers 503 overloaded_error (retryable) while the budget is held, and lets calls in again once it is given back', async () => {
    const held = await holdBody(t.baseUrl, 700_000, apiKey);
    try {
      const refused = await post(t.baseUrl, 600_000, apiKey);
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('1');
      const body = (await refused.json()) as { type: string; error: { type: string; message: string } };
      expect(body.type).to.equal('error');
      expect(body.error.type).to.equal('overloaded_error');
      // A small body still fits beside the held one.
      expect((await post(t.baseUrl, 10_000, apiKey)).status, 'a small call is not refused').to.equal(200);
    } finally {
      held.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The aborted request gave its share back: the large call is answered.
    expect((await post(t.baseUrl, 600_000, apiKey)).status).to.equal(200);
  });

  it('lets one body larger than the whole budget through when nothing else holds it', async () => {
    expect((await post(t.baseUrl, 1_500_000, apiKey)).status).to.equal(200);
  });
});
