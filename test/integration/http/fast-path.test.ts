import { expect } from 'chai';
import { startKeyedApp, type TestApp } from '../../support/app';

// Ordinary data-plane calls arriving over HTTP are served by the fast path
// (src/data-plane/http/fast-path.ts); Fastify's inject() always takes the
// Fastify route. The same request must get the same answer either way.

interface Answer {
  status: number;
  contentType: string | undefined;
  requestId: string | undefined;
  body: unknown;
}

/** Request ids differ between two calls; everything else must not. */
function normalise(text: string, requestId: string | undefined): unknown {
  const id = requestId?.replace(/^req_/, '') ?? '\u0000';
  const parsed: unknown = JSON.parse(text.split(id).join('<id>'));
  return parsed;
}

describe('data-plane fast path: the same answers as the Fastify route', () => {
  let t: TestApp;
  let key: string;

  before(async () => {
    ({ t, key } = await startKeyedApp(['tsxt-general', 'tsxt-fast']));
  });
  after(async () => t.close());

  async function overHttp(path: string, headers: Record<string, string>, body: string): Promise<Answer> {
    const response = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers, body });
    const requestId = response.headers.get('request-id') ?? undefined;
    expect(response.headers.get('x-request-id')).to.equal(requestId);
    return { status: response.status, contentType: response.headers.get('content-type') ?? undefined, requestId, body: normalise(await response.text(), requestId) };
  }

  async function throughFastify(path: string, headers: Record<string, string>, body: string): Promise<Answer> {
    const response = await t.app.server.inject({ method: 'POST', url: path, headers, payload: body });
    const requestId = response.headers['request-id'] as string | undefined;
    return { status: response.statusCode, contentType: response.headers['content-type'] as string | undefined, requestId, body: normalise(response.body, requestId) };
  }

  const anthropic = () => ({ 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': key });
  const openai = () => ({ 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${key}` });
  const message = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({ model: 'tsxt-general', max_tokens: 64, messages: [{ role: 'user', content: 'Name three rivers in Europe.' }], ...extra });

  const cases: Array<[string, string, () => Record<string, string>, () => string]> = [
    ['an answered Messages call', '/v1/messages', anthropic, () => message()],
    ['an answered call with ?beta=true and a trailing slash', '/v1/messages/?beta=true', anthropic, () => message()],
    ['an answered chat completion', '/v1/chat/completions', openai, () => JSON.stringify({ model: 'tsxt-fast', messages: [{ role: 'user', content: 'Hi there' }] })],
    ['a token count', '/v1/messages/count_tokens', anthropic, () => JSON.stringify({ model: 'tsxt-general', messages: [{ role: 'user', content: 'Count me' }] })],
    ['a body that is not JSON', '/v1/messages', anthropic, () => '{"model": "tsxt-general",'],
    ['a body with a byte-order mark', '/v1/messages', anthropic, () => `\ufeff${message()}`],
    ['a prototype-poisoning body', '/v1/messages', anthropic, () => '{"__proto__": {"admin": true}, "model": "tsxt-general"}'],
    ['a constructor-poisoning body', '/v1/chat/completions', openai, () => '{"constructor": {"prototype": {"admin": true}}}'],
    ['no key', '/v1/messages', () => ({ 'content-type': 'application/json' }), () => message()],
    ['a malformed key', '/v1/chat/completions', () => ({ 'content-type': 'application/json', authorization: 'Bearer nope' }), () => message()],
    ['a missing field, named', '/v1/messages', anthropic, () => JSON.stringify({ model: 'tsxt-general', messages: [{ role: 'user', content: 'x' }] })],
    ['a wrong type, named', '/v1/chat/completions', openai, () => JSON.stringify({ model: 'tsxt-fast', messages: 'hello' })],
    ['an unknown model', '/v1/messages', anthropic, () => message({ model: 'no-such-model' })],
    ['a model outside the key scope', '/v1/messages', anthropic, () => message({ model: 'tsxt-code' })],
    ['a body nested too deep', '/v1/messages', anthropic, () => `${'['.repeat(120)}${']'.repeat(120)}`],
    ['a text/plain body (Fastify answers both)', '/v1/messages', () => ({ ...anthropic(), 'content-type': 'text/plain' }), () => message()],
  ];

  for (const [name, path, headers, body] of cases) {
    it(name, async () => {
      const served = t.app.fastPath.served;
      const fast = await overHttp(path, headers(), body());
      const slow = await throughFastify(path, headers(), body());
      // Fastify's inject never reaches the HTTP server, so only the first call can have been the fast path's.
      expect(t.app.fastPath.served - served, 'calls the fast path took').to.equal(name.includes('text/plain') ? 0 : 1);
      expect(fast.requestId, 'a request id on the fast path').to.match(/^req_/);
      expect({ status: fast.status, contentType: fast.contentType, body: fast.body }).to.deep.equal({
        status: slow.status,
        contentType: slow.contentType,
        body: slow.body,
      });
    });
  }

  it('answers an ordinary call itself, logging it and counting it as Fastify would', async () => {
    const before = await (await fetch(`${t.baseUrl}/metrics`)).text();
    const countOf = (text: string) => Number(/gateway_requests_total\{form="messages",model="tsxt-general",status="200"\} (\d+)/.exec(text)?.[1] ?? 0);
    const answer = await overHttp('/v1/messages', anthropic(), message());
    expect(answer.status).to.equal(200);
    const line = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.request_id === answer.requestId && l.msg === 'request completed');
    expect(line).to.include({ method: 'POST', url: '/v1/messages', status: 200 });
    const after = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(countOf(after) - countOf(before)).to.equal(1);
  });
});
