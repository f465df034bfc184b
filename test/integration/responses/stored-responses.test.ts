// Stateful Responses (issue 29): what `store` keeps, how previous_response_id
// and item_reference reach the upstream as the whole conversation in its own
// protocol, and that nothing of one account is visible to another.
import { expect } from 'chai';
import { api, createAccount, createKey, type TestApp } from '../../support/app';
import { KEY_SCOPE, startKeyedGateway, usageDetail, type KeyedGateway } from '../../e2e/e2e-support';

/** Every text in a JSON value, joined: what an upstream request "contains" whatever its protocol's shape. */
function textsOf(value: unknown): string {
  return JSON.stringify(value);
}

describe('stored responses: store, previous_response_id, item_reference, retrieval', function () {
  this.timeout(60_000);
  let gateway: KeyedGateway;
  let t: TestApp;
  let other: string;

  before(async () => {
    gateway = await startKeyedGateway({ responses: true });
    t = gateway.t;
    const stranger = await createAccount(t);
    other = (await createKey(t, stranger.token, { model_scope: [...KEY_SCOPE, 'm-responses'] })).api_key;
  });

  after(async () => {
    await gateway?.close();
  });

  const create = async (body: Record<string, unknown>, secret = gateway.secret) => api(t, 'POST', '/v1/responses', secret, body);
  const get = (path: string, secret = gateway.secret) => api(t, 'GET', path, secret);

  it('keeps a response by default (store: true shown), with its input items; store: false keeps nothing', async () => {
    const stored = await create({ model: 'm-mock', input: 'Remember the word zebra.' });
    expect(stored.status, JSON.stringify(stored.body)).to.equal(200);
    expect(stored.body.id).to.match(/^resp_[0-9a-f]{48}$/);
    expect(stored.body).to.include({ store: true, previous_response_id: null, conversation: null });

    const retrieved = await get(`/v1/responses/${stored.body.id}`);
    expect(retrieved.status).to.equal(200);
    expect(retrieved.body.id).to.equal(stored.body.id);
    expect(retrieved.body.output).to.deep.equal(stored.body.output);
    const items = await get(`/v1/responses/${stored.body.id}/input_items`);
    expect(items.status).to.equal(200);
    expect(items.body).to.include({ object: 'list', has_more: false });
    expect(items.body.data).to.have.length(1);
    expect(items.body.data[0]).to.include({ type: 'message', role: 'user' });
    expect(items.body.data[0].content).to.deep.equal([{ type: 'input_text', text: 'Remember the word zebra.' }]);
    expect(items.body.first_id).to.equal(items.body.data[0].id);

    const unstored = await create({ model: 'm-mock', input: 'Forget this.', store: false });
    expect(unstored.status).to.equal(200);
    expect(unstored.body.store).to.equal(false);
    const missing = await get(`/v1/responses/${unstored.body.id}`);
    expect(missing.status).to.equal(404);
    expect(missing.body.error).to.include({ type: 'invalid_request_error', param: 'response_id', code: 'response_not_found' });
  });

  for (const kind of ['responses', 'anthropic', 'openai'] as const) {
    it(`previous_response_id reaches a ${kind} upstream as the whole conversation, tool call and output included`, async () => {
      const fake = gateway.fakes[kind]!;
      const model = { responses: 'm-responses', anthropic: 'm-anthropic', openai: 'm-openai' }[kind];
      const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
      fake.script({ toolUse: { id: 'call_w1', name: 'get_weather', input: { city: 'Lyon' } } });
      const first = await create({ model, input: 'What is the weather in Lyon? Codeword kiwi.', tools });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const call = (first.body.output as Array<Record<string, unknown>>).find((item) => item.type === 'function_call');
      expect(call, JSON.stringify(first.body.output)).to.not.equal(undefined);

      fake.script({ text: 'It is sunny in Lyon.' });
      const seen = fake.requests.length;
      const second = await create({
        model,
        previous_response_id: first.body.id,
        tools,
        input: [{ type: 'function_call_output', call_id: call!.call_id, output: 'sunny, 24 C' }],
      });
      expect(second.status, JSON.stringify(second.body)).to.equal(200);
      expect(second.body.previous_response_id).to.equal(first.body.id);
      const upstream = fake.requests[seen]!.body;
      const text = textsOf(upstream);
      expect(text).to.include('Codeword kiwi');
      expect(text).to.include('call_w1');
      expect(text).to.include('sunny, 24 C');
      expect(text).to.not.include('previous_response_id');

      // The third turn carries both earlier turns.
      fake.script({ text: 'You are welcome.' });
      const third = await create({ model, previous_response_id: second.body.id, input: 'Thanks!' });
      expect(third.status).to.equal(200);
      const last = textsOf(fake.requests[fake.requests.length - 1]!.body);
      for (const part of ['Codeword kiwi', 'sunny, 24 C', 'It is sunny in Lyon.', 'Thanks!']) expect(last).to.include(part);
    });
  }

  it('keeps a streamed response; encrypted reasoning goes back to the upstream as it returned it, asked for or not', async () => {
    const fake = gateway.fakes.anthropic;
    fake.script({ thinking: 'Let me think.', text: 'Forty-two.' });
    const streamed = await fetch(`${t.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm-anthropic', input: 'The answer?', stream: true, reasoning: { effort: 'high' } }),
    });
    const text = await streamed.text();
    const completed = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: { id: string; output: Array<Record<string, unknown>> } })
      .find((event) => event.type === 'response.completed');
    expect(completed, text.slice(0, 500)).to.not.equal(undefined);
    const id = completed!.response!.id;
    const reasoning = completed!.response!.output.find((item) => item.type === 'reasoning');
    expect(reasoning, 'a reasoning item').to.not.equal(undefined);
    expect(reasoning!.encrypted_content, 'not asked for: not shown').to.equal(undefined);
    expect((await get(`/v1/responses/${id}`)).body.output).to.deep.equal(completed!.response!.output);

    fake.script({ text: 'Still 42.' });
    const seen = fake.requests.length;
    const follow = await create({ model: 'm-anthropic', previous_response_id: id, input: 'Sure?', reasoning: { effort: 'high' } });
    expect(follow.status, JSON.stringify(follow.body)).to.equal(200);
    const upstream = fake.requests[seen]!.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    const thinking = upstream.messages[1]!.content.find((block) => block.type === 'thinking');
    expect(thinking, JSON.stringify(upstream.messages)).to.deep.include({ thinking: 'Let me think.' });
    expect(thinking!.signature).to.match(/^sig_fake_/);
  });

  it('asks a Responses upstream for encrypted reasoning when storing, hides it from a client that did not ask, and replays it', async () => {
    const fake = gateway.fakes.responses!;
    fake.script({ thinking: 'Weighing it.', text: 'Blue.' });
    const seen = fake.requests.length;
    const first = await create({ model: 'm-responses', input: 'Favourite colour?' });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(fake.requests[seen]!.body).to.deep.include({ store: false, include: ['reasoning.encrypted_content'] });
    const reasoning = (first.body.output as Array<Record<string, unknown>>).find((item) => item.type === 'reasoning')!;
    expect(reasoning.encrypted_content).to.equal(undefined);

    fake.script({ text: 'Still blue.' });
    const follow = await create({ model: 'm-responses', input: [{ type: 'item_reference', id: reasoning.id }, { role: 'user', content: 'Sure?' }] });
    expect(follow.status, JSON.stringify(follow.body)).to.equal(200);
    const replayed = (fake.requests[fake.requests.length - 1]!.body.input as Array<Record<string, unknown>>).find((item) => item.type === 'reasoning');
    expect(replayed).to.deep.include({ id: reasoning.id });
    expect(replayed!.encrypted_content).to.match(/^enc_fake_/);

    const unstored = fake.requests.length;
    fake.script({ text: 'ok' });
    await create({ model: 'm-responses', input: 'no keeping', store: false });
    expect(fake.requests[unstored]!.body.include).to.equal(undefined);
  });

  it('refuses an item id it could not keep (over 120 characters) with a 400 naming it, before any upstream call', async () => {
    const seen = gateway.fakes.openai.requests.length;
    const long = await create({ model: 'm-openai', input: [{ type: 'message', role: 'user', content: 'hi', id: 'm'.repeat(121) }] });
    expect(long.status).to.equal(400);
    expect(long.body.error.param).to.equal('input[0].id');
    expect(gateway.fakes.openai.requests.length).to.equal(seen);
  });

  it('resolves item_reference items to the stored items they name (same account)', async () => {
    const fake = gateway.fakes.openai;
    fake.script({ text: 'The capital is Paris.' });
    const first = await create({ model: 'm-openai', input: 'Capital of France? (mango)' });
    const message = (first.body.output as Array<Record<string, unknown>>).find((item) => item.type === 'message')!;
    fake.script({ text: 'About two million.' });
    const seen = fake.requests.length;
    const second = await create({
      model: 'm-openai',
      input: [{ role: 'user', content: 'Capital of France? (mango)' }, { type: 'item_reference', id: message.id }, { role: 'user', content: 'Population?' }],
    });
    expect(second.status, JSON.stringify(second.body)).to.equal(200);
    const upstream = fake.requests[seen]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(upstream.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(textsOf(upstream.messages[1])).to.include('The capital is Paris.');

    const unknown = await create({ model: 'm-openai', input: [{ type: 'item_reference', id: 'msg_nope' }, { role: 'user', content: 'x' }] });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.include({ type: 'invalid_request_error', param: 'input[0].id', code: 'item_not_found' });
    const foreign = await create({ model: 'm-openai', input: [{ type: 'item_reference', id: message.id }, { role: 'user', content: 'x' }] }, other);
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error.param).to.equal('input[0].id');
  });

  it("answers 404 in OpenAI's shape for another account's, an unknown and a deleted response id", async () => {
    const mine = await create({ model: 'm-mock', input: 'private' });
    const cases: Array<[string, string]> = [
      ['another account', other],
      ['the owner', gateway.secret],
    ];
    for (const [who, secret] of cases) {
      const id = who === 'the owner' ? 'resp_0123456789abcdef' : mine.body.id;
      const follow = await create({ model: 'm-mock', previous_response_id: id, input: 'again' }, secret);
      expect(follow.status, who).to.equal(404);
      expect(follow.body.error).to.deep.equal({
        message: `Previous response with id '${id}' not found.`,
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      });
    }
    for (const path of [`/v1/responses/${mine.body.id}`, `/v1/responses/${mine.body.id}/input_items`]) expect((await get(path, other)).status).to.equal(404);
    expect((await api(t, 'DELETE', `/v1/responses/${mine.body.id}`, other)).status).to.equal(404);

    const deleted = await api(t, 'DELETE', `/v1/responses/${mine.body.id}`, gateway.secret);
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.deep.equal({ id: mine.body.id, object: 'response', deleted: true });
    expect((await get(`/v1/responses/${mine.body.id}`)).status).to.equal(404);
    expect((await create({ model: 'm-mock', previous_response_id: mine.body.id, input: 'x' })).status).to.equal(404);
  });

  it('refuses background: true with a clear 400, and previous_response_id with conversation together', async () => {
    const background = await create({ model: 'm-mock', input: 'x', background: true });
    expect(background.status).to.equal(400);
    expect(background.body.error.param).to.equal('background');
    const both = await create({ model: 'm-mock', input: 'x', previous_response_id: 'resp_1', conversation: 'conv_1' });
    expect(both.status).to.equal(400);
    expect(both.body.error.param).to.equal('conversation');
  });

  it('links the usage record to its response id', async () => {
    const response = await create({ model: 'm-mock', input: 'bill me' });
    const detail = await usageDetail(t, gateway.owner.token, gateway.keyId);
    const record = detail.items.find((item) => (item as { response_id?: string }).response_id === response.body.id);
    expect(record, 'usage record with response_id').to.not.equal(undefined);
  });
});
