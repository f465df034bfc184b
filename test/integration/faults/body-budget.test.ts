import net from 'node:net';
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';

interface Partial {
  socket: net.Socket;
  /** Everything the server wrote back, once it closes the connection. */
  answer: Promise<string>;
}

interface PartialOptions {
  apiKey: string;
  /** Bytes of body actually sent before the client stalls. */
  send: number;
  /** Content-Length to declare; unset: a chunked body. */
  declare?: number;
  /** X-Forwarded-For (the test app trusts 127.0.0.1 as a proxy). */
  from?: string;
}

/** A POST whose headers and first `send` body bytes are sent, then nothing: the request stays in flight. */
function partialPost(base: string, options: PartialOptions): Promise<Partial> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      const framing = options.declare === undefined ? 'transfer-encoding: chunked' : `content-length: ${options.declare}`;
      const from = options.from === undefined ? '' : `x-forwarded-for: ${options.from}\r\n`;
      const body = 'x'.repeat(options.send);
      socket.write(
        `POST /v1/messages HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\nx-api-key: ${options.apiKey}\r\n${from}${framing}\r\n\r\n` +
          (options.declare === undefined && options.send > 0 ? `${options.send.toString(16)}\r\n${body}\r\n` : body),
      );
      // The server has read the headers and what was sent of the body by then.
      setTimeout(() => resolve({ socket, answer }), 200);
    });
    const answer = new Promise<string>((done) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.on('close', () => done(text));
    });
    socket.on('error', reject);
  });
}

async function post(base: string, bytes: number, apiKey: string, from?: string): Promise<Response> {
  const body = JSON.stringify({ model: 'tsxt-fast', max_tokens: 16, messages: [{ role: 'user', content: 'x'.repeat(Math.max(0, bytes - 90)) }] });
  return fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01', ...(from ? { 'x-forwarded-for': from } : {}) },
    body,
  });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

describe('request-body memory budget', () => {
  let t: TestApp;
  // The budget is taken once a caller is authenticated (a caller without a valid key gets 401 before any body is read).
  let apiKey: string;

  before(async () => {
    t = await startTestApp({ env: { GATEWAY_BODY_BUDGET_MB: '1', GATEWAY_TRUSTED_PROXIES: '127.0.0.1', GATEWAY_BODIES_PER_CLIENT: '8' } });
    const owner = await createAccount(t);
    apiKey = (await createKey(t, owner.token, { model_scope: ['tsxt-fast'] })).api_key;
  });
  after(async () => t.close());

  it('answers 503 overloaded_error (retryable) to a body that arrives past the budget, and lets calls in again once it is given back', async () => {
    const held = await partialPost(t.baseUrl, { apiKey, declare: 800_000, send: 700_000 });
    try {
      const refused = await post(t.baseUrl, 600_000, apiKey, '203.0.113.1');
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('1');
      const body = (await refused.json()) as { type: string; error: { type: string; message: string } };
      expect(body.type).to.equal('error');
      expect(body.error.type).to.equal('overloaded_error');
      // A small body still fits beside the held one.
      expect((await post(t.baseUrl, 10_000, apiKey, '203.0.113.2')).status, 'a small call is not refused').to.equal(200);
    } finally {
      held.socket.destroy();
    }
    await settle();
    // The aborted request gave its share back: the large call is answered.
    expect((await post(t.baseUrl, 600_000, apiKey)).status).to.equal(200);
  });

  it('lets one body larger than the whole budget through when nothing else holds it', async () => {
    expect((await post(t.baseUrl, 1_500_000, apiKey)).status).to.equal(200);
  });

  it('holds no budget for bytes a client only declared: 40 requests declaring 20 MB and sending nothing block nobody', async () => {
    const stalled = await Promise.all(Array.from({ length: 40 }, (_, i) => partialPost(t.baseUrl, { apiKey, declare: 20 * 1024 * 1024, send: 0, from: `198.51.100.${i + 1}` })));
    try {
      expect((await post(t.baseUrl, 600_000, apiKey)).status).to.equal(200);
    } finally {
      for (const request of stalled) request.socket.destroy();
    }
  });

  it('counts a chunked body against the budget as it arrives', async () => {
    const held = await partialPost(t.baseUrl, { apiKey, send: 700_000, from: '203.0.113.3' });
    try {
      expect((await post(t.baseUrl, 600_000, apiKey, '203.0.113.4')).status).to.equal(503);
    } finally {
      held.socket.destroy();
    }
    await settle();
    expect((await post(t.baseUrl, 600_000, apiKey)).status).to.equal(200);
  });

  it('stops reading a chunked body that outgrows the budget and answers it 503', async () => {
    const held = await partialPost(t.baseUrl, { apiKey, declare: 800_000, send: 700_000, from: '203.0.113.5' });
    try {
      const growing = await partialPost(t.baseUrl, { apiKey, send: 600_000, from: '203.0.113.6' });
      const answer = await growing.answer;
      expect(answer).to.match(/^HTTP\/1\.1 503 /);
      expect(answer).to.include('overloaded');
      expect(answer.toLowerCase()).to.include('retry-after: 1');
    } finally {
      held.socket.destroy();
    }
  });

  it('reads at most GATEWAY_BODIES_PER_CLIENT (8 here) bodies at once from one client address (X-Forwarded-For behind a trusted proxy): the next gets 429, other clients are unaffected', async () => {
    const stalled = await Promise.all(Array.from({ length: 8 }, () => partialPost(t.baseUrl, { apiKey, declare: 1_000, send: 10, from: '203.0.113.7' })));
    try {
      const refused = await post(t.baseUrl, 1_000, apiKey, '203.0.113.7');
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.equal('1');
      const body = (await refused.json()) as { type: string; error: { type: string } };
      expect(body.type).to.equal('error');
      expect(body.error.type).to.equal('rate_limit_error');
      // A chunked body (the Fastify route) counts as one of them too.
      const chunked = await partialPost(t.baseUrl, { apiKey, send: 10, from: '203.0.113.7' });
      expect(await chunked.answer).to.match(/^HTTP\/1\.1 429 /);
      expect((await post(t.baseUrl, 1_000, apiKey, '203.0.113.8')).status, 'another client').to.equal(200);
    } finally {
      for (const request of stalled) request.socket.destroy();
    }
    await settle();
    expect((await post(t.baseUrl, 1_000, apiKey, '203.0.113.7')).status, 'the client once its bodies are gone').to.equal(200);
  });
});

describe('request-body budget and a body that stalls', () => {
  let t: TestApp;
  let apiKey: string;

  before(async () => {
    t = await startTestApp({ env: { GATEWAY_BODY_BUDGET_MB: '1', GATEWAY_REQUEST_TIMEOUT_MS: '1500' } });
    const owner = await createAccount(t);
    apiKey = (await createKey(t, owner.token, { model_scope: ['tsxt-fast'] })).api_key;
  });
  after(async () => t.close());

  it('cuts a body that stops mid-way after GATEWAY_REQUEST_TIMEOUT_MS with 408, and gives its budget back', async () => {
    const stalled = await partialPost(t.baseUrl, { apiKey, declare: 800_000, send: 700_000 });
    expect((await post(t.baseUrl, 600_000, apiKey)).status, 'while it is held').to.equal(503);
    const answer = await stalled.answer;
    expect(answer).to.match(/^HTTP\/1\.1 408 /);
    expect((await post(t.baseUrl, 600_000, apiKey)).status, 'once it is cut').to.equal(200);
  });
});
