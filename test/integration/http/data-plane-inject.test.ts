import { expect } from 'chai';
import type { InjectOptions } from 'fastify';
import { startKeyedApp, type TestApp } from '../../support/app';

// The data plane in process: Fastify's inject() drives the data-plane
// lifecycle (src/data-plane/http/lifecycle.ts) through its Fastify adapter,
// with no socket. Each reply's error form is its route's: Anthropic's for the
// Messages form, OpenAI's for chat completions, Responses and stored objects,
// and on the model list and lookup whichever client asked (anthropic-version).

describe('data plane in process (inject): envelopes, named fields, an answered call', () => {
  let t: TestApp;
  let key: string;

  before(async () => {
    ({ t, key } = await startKeyedApp(['tsxt-general', 'tsxt-fast']));
  });
  after(async () => t.close());

  async function inject(options: InjectOptions): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
    const response = await t.app.server.inject(options);
    return { status: response.statusCode, headers: response.headers, body: response.json() };
  }

  const post = (url: string, headers: Record<string, string>, payload: unknown) =>
    inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(payload) });
  const anthropic = () => ({ 'anthropic-version': '2023-06-01', 'x-api-key': key });
  const openai = () => ({ authorization: `Bearer ${key}` });
  const message = { model: 'tsxt-general', max_tokens: 64, messages: [{ role: 'user', content: 'Name three rivers in Europe.' }] };
  const chat = { model: 'tsxt-fast', messages: [{ role: 'user', content: 'Hi there' }] };

  describe('401 without a key, in each route form', () => {
    it('Messages: the Anthropic envelope, with the request id in the body and the headers', async () => {
      const answer = await post('/v1/messages', { 'anthropic-version': '2023-06-01' }, message);
      expect(answer.status).to.equal(401);
      expect(answer.headers['request-id']).to.match(/^req_/);
      expect(answer.body).to.deep.equal({
        type: 'error',
        error: { type: 'authentication_error', message: 'An API key is required: send Authorization: Bearer tsxt-… or x-api-key' },
        request_id: answer.headers['request-id'],
      });
    });

    for (const [name, url, payload] of [
      ['chat completions', '/v1/chat/completions', chat],
      ['Responses', '/v1/responses', { model: 'tsxt-fast', input: 'Hi there' }],
    ] as const) {
      it(`${name}: the OpenAI envelope with the code`, async () => {
        const answer = await post(url, {}, payload);
        expect(answer.status).to.equal(401);
        expect(answer.body.error).to.include({ type: 'authentication_error', code: 'missing_api_key', param: null });
      });
    }

    it('a stored response (a path with a parameter, which only the Fastify adapter serves): the OpenAI envelope', async () => {
      const answer = await inject({ method: 'GET', url: '/v1/responses/resp_nope' });
      expect(answer.status).to.equal(401);
      expect(answer.body.error).to.include({ type: 'authentication_error', code: 'missing_api_key' });
    });

    it('the model list: the envelope of the client that asked', async () => {
      const fromAnthropic = await inject({ method: 'GET', url: '/v1/models', headers: { 'anthropic-version': '2023-06-01' } });
      const fromOpenai = await inject({ method: 'GET', url: '/v1/models' });
      expect([fromAnthropic.status, fromOpenai.status]).to.deep.equal([401, 401]);
      expect(fromAnthropic.body).to.include({ type: 'error' });
      expect(fromAnthropic.body.error.type).to.equal('authentication_error');
      expect(fromOpenai.body.error).to.include({ type: 'authentication_error', code: 'missing_api_key' });
    });

    it('a malformed key is refused the same way, before the body is looked at', async () => {
      const answer = await post('/v1/chat/completions', { authorization: 'Bearer tsxt-nope' }, { not: 'a chat body' });
      expect(answer.status).to.equal(401);
      expect(answer.body.error).to.include({ code: 'invalid_api_key', message: 'The API key is malformed' });
    });
  });

  describe('400 naming the field', () => {
    it('Messages: a missing max_tokens', async () => {
      const { max_tokens: _dropped, ...rest } = message;
      const answer = await post('/v1/messages', anthropic(), rest);
      expect(answer.status).to.equal(400);
      expect(answer.body.error).to.deep.equal({ type: 'invalid_request_error', message: 'max_tokens: Field required' });
    });

    it('chat completions: messages of the wrong type, named in param', async () => {
      const answer = await post('/v1/chat/completions', openai(), { model: 'tsxt-fast', messages: 'hello' });
      expect(answer.status).to.equal(400);
      expect(answer.body.error).to.include({ type: 'invalid_request_error', code: 'invalid_field', param: 'messages' });
    });

    it('the model list: a cursor that is not in it, in the Anthropic form when asked by an Anthropic client', async () => {
      const answer = await inject({ method: 'GET', url: '/v1/models?after_id=no-such-model', headers: anthropic() });
      expect(answer.status).to.equal(400);
      expect(answer.body.error).to.deep.equal({ type: 'invalid_request_error', message: 'after_id "no-such-model" is not a model in this list' });
    });
  });

  describe('answered calls on the mock upstream', () => {
    it('a Messages call: 200, JSON, the routed model and the usage', async () => {
      const answer = await post('/v1/messages', anthropic(), message);
      expect(answer.status).to.equal(200);
      expect(answer.headers['content-type']).to.match(/^application\/json/);
      expect(answer.headers['x-route']).to.match(/^tier=/);
      expect(answer.body).to.include({ type: 'message', role: 'assistant' });
      expect(answer.body.usage.input_tokens).to.be.greaterThan(0);
      expect(answer.body.usage.output_tokens).to.be.greaterThan(0);
    });

    it('a chat completion: 200 with a choice and usage', async () => {
      const answer = await post('/v1/chat/completions', openai(), chat);
      expect(answer.status).to.equal(200);
      expect(answer.body.object).to.equal('chat.completion');
      expect(answer.body.choices[0].message.role).to.equal('assistant');
      expect(answer.body.usage.total_tokens).to.be.greaterThan(0);
    });

    it('a model lookup in the scope of the key, in each client shape', async () => {
      const fromAnthropic = await inject({ method: 'GET', url: '/v1/models/tsxt-fast', headers: anthropic() });
      const fromOpenai = await inject({ method: 'GET', url: '/v1/models/tsxt-fast', headers: openai() });
      expect(fromAnthropic.body).to.include({ type: 'model', id: 'tsxt-fast' });
      expect(fromOpenai.body).to.include({ object: 'model', id: 'tsxt-fast' });
    });
  });

  it('a /v1 path no route takes answers in the form its path belongs to', async () => {
    const chatLike = await inject({ method: 'POST', url: '/v1/chat/nowhere', headers: openai() });
    const messagesLike = await inject({ method: 'POST', url: '/v1/messages/nowhere', headers: anthropic() });
    expect(chatLike.status).to.equal(404);
    expect(chatLike.body.error).to.include({ code: 'route_not_found', type: 'not_found_error' });
    expect(messagesLike.status).to.equal(404);
    expect(messagesLike.body).to.include({ type: 'error' });
    expect(messagesLike.body.error.type).to.equal('not_found_error');
  });
});
