// The HTTP edge (issue 15): a client that never finishes its request is cut
// off, and what Node's parser refuses answers in our JSON envelope, not a
// bare status line.
import net from 'node:net';
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../support/app';

/** Writes `chunks` on a raw socket and returns everything the server sent until it closed (or `waitMs`). */
function raw(port: number, chunks: string[], waitMs = 8_000): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => {
      for (const chunk of chunks) socket.write(chunk);
    });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      text += data;
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, ms: Date.now() - started });
    }, waitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, ms: Date.now() - started });
    });
    socket.on('error', reject);
  });
}

const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const bodyOf = (text: string): { type?: string; error?: { code?: string; message?: string } } => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as never;

describe('security: the HTTP edge', function () {
  this.timeout(30_000);
  let t: TestApp;
  let port: number;
  let apiKey: string;
  before(async () => {
    t = await startTestApp({ env: { GATEWAY_HEADERS_TIMEOUT_MS: '1000', GATEWAY_REQUEST_TIMEOUT_MS: '1500' } });
    port = Number(new URL(t.baseUrl).port);
    const owner = await createAccount(t);
    apiKey = (await createKey(t, owner.token)).api_key;
  });
  after(async () => {
    await t?.close();
  });

  it('closes a request whose body stops arriving with 408 in our envelope, within the request timeout', async () => {
    const head = `POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nx-api-key: ${apiKey}\r\ncontent-length: 1000\r\n\r\n{"model":`;
    const { text, ms } = await raw(port, [head]);
    expect(statusOf(text), text).to.equal(408);
    expect(bodyOf(text).error?.code).to.equal('request_timeout');
    expect(ms).to.be.below(4_000);
  });

  it('closes a connection that never finishes its headers', async () => {
    const { text, ms } = await raw(port, ['POST /v1/messages HTTP/1.1\r\nHost: x\r\n']);
    expect(statusOf(text), text).to.equal(408);
    expect(ms).to.be.below(4_000);
  });

  it('answers a 70,000-character URL with 414 and headers over 16 KB with 431, both as JSON', async () => {
    const long = await raw(port, [`GET /v1/models?${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
    expect(statusOf(long.text), long.text.slice(0, 200)).to.equal(414);
    expect(bodyOf(long.text).error?.code).to.equal('uri_too_long');
    const headers = Array.from({ length: 24 }, (_, i) => `x-filler-${i}: ${'b'.repeat(1000)}\r\n`).join('');
    const fat = await raw(port, [`GET /v1/models HTTP/1.1\r\nHost: x\r\n${headers}\r\n`]);
    expect(statusOf(fat.text), fat.text.slice(0, 200)).to.equal(431);
    expect(bodyOf(fat.text)).to.deep.include({ type: 'error' });
    expect(bodyOf(fat.text).error?.code).to.equal('headers_too_large');
  });

  it('answers a bad key 401 before reading the body, chunked or declared (nothing is buffered for it)', async () => {
    const key = 'tsxt-not-a-real-key-0000000000000000000000';
    const chunked = await raw(
      port,
      [`POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ntransfer-encoding: chunked\r\n\r\n10\r\n{"model":"abc", \r\n`],
      1_000,
    );
    expect(statusOf(chunked.text), chunked.text.slice(0, 200)).to.equal(401);
    const declared = await raw(
      port,
      [`POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ncontent-length: 19000000\r\n\r\n{"model":`],
      1_000,
    );
    expect(statusOf(declared.text), declared.text.slice(0, 200)).to.equal(401);
  });

  it('still serves an ordinary request on the same server', async () => {
    const response = await fetch(`${t.baseUrl}/healthz`);
    expect(response.status).to.equal(200);
  });
});
