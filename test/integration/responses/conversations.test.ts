// The Conversations API and `conversation` on /v1/responses: CRUD, items
// (list with limit/order/after, add, get, delete), a response's input and
// output appended to its conversation, the next call reading them as
// context, and another account seeing none of it.
import { expect } from 'chai';
import { api, createAccount, createKey, type TestApp } from '../../support/app';
import { KEY_SCOPE, startKeyedGateway, type KeyedGateway } from '../../e2e/e2e-support';

describe('conversations: the Conversations API and conversation on /v1/responses', function () {
  this.timeout(60_000);
  let gateway: KeyedGateway;
  let t: TestApp;
  let other: string;

  before(async () => {
    gateway = await startKeyedGateway();
    t = gateway.t;
    const stranger = await createAccount(t);
    other = (await createKey(t, stranger.token, { model_scope: KEY_SCOPE })).api_key;
  });

  after(async () => {
    await gateway?.close();
  });

  const call = (method: string, path: string, body?: unknown, secret = gateway.secret) => api(t, method, path, secret, body);

  it('creates, reads, updates and deletes a conversation; items are listed by limit, order and after', async () => {
    const created = await call('POST', '/v1/conversations', {
      metadata: { topic: 'demo' },
      items: [
        { type: 'message', role: 'user', content: 'first' },
        { role: 'assistant', content: 'second' },
        { role: 'user', content: [{ type: 'input_text', text: 'third' }] },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body).to.include({ object: 'conversation' });
    expect(created.body.id).to.match(/^conv_[0-9a-f]{48}$/);
    expect(created.body.metadata).to.deep.equal({ topic: 'demo' });
    expect(created.body.created_at).to.be.a('number');
    const id = created.body.id as string;

    expect((await call('GET', `/v1/conversations/${id}`)).body).to.deep.equal(created.body);
    const updated = await call('POST', `/v1/conversations/${id}`, { metadata: { topic: 'changed' } });
    expect(updated.status).to.equal(200);
    expect(updated.body.metadata).to.deep.equal({ topic: 'changed' });

    const asc = await call('GET', `/v1/conversations/${id}/items?order=asc`);
    expect(asc.status).to.equal(200);
    const texts = (asc.body.data as Array<{ content: Array<{ text: string }> }>).map((item) => item.content[0]!.text);
    expect(texts).to.deep.equal(['first', 'second', 'third']);
    expect(asc.body.data[1].content[0].type).to.equal('output_text');
    const desc = await call('GET', `/v1/conversations/${id}/items?limit=2`);
    expect(desc.body.data.map((item: { id: string }) => item.id)).to.deep.equal([asc.body.data[2].id, asc.body.data[1].id]);
    expect(desc.body.has_more).to.equal(true);
    const next = await call('GET', `/v1/conversations/${id}/items?limit=2&after=${desc.body.last_id}`);
    expect(next.body.data.map((item: { id: string }) => item.id)).to.deep.equal([asc.body.data[0].id]);
    expect(next.body.has_more).to.equal(false);

    const added = await call('POST', `/v1/conversations/${id}/items`, { items: [{ role: 'user', content: 'fourth' }] });
    expect(added.status).to.equal(200);
    expect(added.body.object).to.equal('list');
    const itemId = added.body.data[0].id as string;
    expect((await call('GET', `/v1/conversations/${id}/items/${itemId}`)).body.content[0].text).to.equal('fourth');
    const afterDelete = await call('DELETE', `/v1/conversations/${id}/items/${itemId}`);
    expect(afterDelete.status).to.equal(200);
    expect(afterDelete.body.id).to.equal(id);
    expect((await call('GET', `/v1/conversations/${id}/items/${itemId}`)).status).to.equal(404);

    const deleted = await call('DELETE', `/v1/conversations/${id}`);
    expect(deleted.body).to.deep.equal({ id, object: 'conversation.deleted', deleted: true });
    const gone = await call('GET', `/v1/conversations/${id}`);
    expect(gone.status).to.equal(404);
    expect(gone.body.error).to.include({ type: 'invalid_request_error', code: 'conversation_not_found' });
  });

  it("keeps another account's conversation out of reach (404 on every endpoint and as a response's conversation)", async () => {
    const mine = await call('POST', '/v1/conversations', { items: [{ role: 'user', content: 'secret plan' }] });
    const id = mine.body.id as string;
    const item = (await call('GET', `/v1/conversations/${id}/items`)).body.data[0].id as string;
    for (const [method, path, body] of [
      ['GET', `/v1/conversations/${id}`],
      ['POST', `/v1/conversations/${id}`, { metadata: {} }],
      ['GET', `/v1/conversations/${id}/items`],
      ['POST', `/v1/conversations/${id}/items`, { items: [{ role: 'user', content: 'x' }] }],
      ['GET', `/v1/conversations/${id}/items/${item}`],
      ['DELETE', `/v1/conversations/${id}/items/${item}`],
      ['DELETE', `/v1/conversations/${id}`],
    ] as Array<[string, string, unknown?]>) {
      expect((await call(method, path, body, other)).status, `${method} ${path}`).to.equal(404);
    }
    const response = await call('POST', '/v1/responses', { model: 'm-mock', conversation: id, input: 'what is the plan?' }, other);
    expect(response.status).to.equal(404);
    expect(response.body.error).to.include({ param: 'conversation', type: 'invalid_request_error' });
    expect((await call('GET', `/v1/conversations/${id}/items`)).body.data).to.have.length(1);
  });

  it('refuses text PostgreSQL cannot keep with a 400 naming the field; a response holding it is kept with U+FFFD', async () => {
    const refused = await call('POST', '/v1/conversations', '{"metadata":{"k":"\\ud800"}}');
    expect(refused.status).to.equal(400);
    expect(refused.body.error.param).to.equal('metadata.k');
    const response = await call('POST', '/v1/responses', '{"model":"m-mock","input":"half a pair \\ud800 and a NUL \\u0000"}');
    expect(response.status).to.equal(200);
    const items = await call('GET', `/v1/responses/${response.body.id}/input_items`);
    expect(items.status).to.equal(200);
    expect(items.body.data[0].content[0].text).to.equal('half a pair \ufffd and a NUL \ufffd');
  });

  it('refuses item ids given twice, already held, or too long (400 naming the item); nothing is added', async () => {
    const twice = await call('POST', '/v1/conversations', { items: [{ role: 'user', content: 'x', id: 'same' }, { role: 'user', content: 'y', id: 'same' }] });
    expect(twice.status).to.equal(400);
    expect(twice.body.error.param).to.equal('items[1].id');
    const conversation = (await call('POST', '/v1/conversations', { items: [{ role: 'user', content: 'x', id: 'msg_dup' }] })).body.id as string;
    const again = await call('POST', `/v1/conversations/${conversation}/items`, { items: [{ role: 'user', content: 'new' }, { role: 'user', content: 'again', id: 'msg_dup' }] });
    expect(again.status).to.equal(400);
    expect(again.body.error).to.include({ param: 'items[1].id', code: 'duplicate_item_id' });
    const long = await call('POST', `/v1/conversations/${conversation}/items`, { items: [{ role: 'user', content: 'x', id: 'm'.repeat(200) }] });
    expect(long.status).to.equal(400);
    expect(long.body.error.param).to.equal('items[0].id');
    const items = await call('GET', `/v1/conversations/${conversation}/items`);
    expect(items.body.data.map((item: { content: Array<{ text: string }> }) => item.content[0]!.text)).to.deep.equal(['x']);
  });

  it('reads a conversation as context and adds the call’s input and output to it', async () => {
    const conversation = (await call('POST', '/v1/conversations', {})).body.id as string;
    const fake = gateway.fakes.anthropic;
    fake.script({ text: 'Noted: the code is 4417.' });
    const first = await call('POST', '/v1/responses', { model: 'm-anthropic', conversation, input: 'Remember the code 4417.' });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.conversation).to.deep.equal({ id: conversation });

    fake.script({ text: 'The code was 4417.' });
    const seen = fake.requests.length;
    const second = await call('POST', '/v1/responses', { model: 'm-anthropic', conversation: { id: conversation }, input: 'What was the code?' });
    expect(second.status).to.equal(200);
    const upstream = fake.requests[seen]!.body as { messages: Array<{ role: string }> };
    expect(upstream.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(JSON.stringify(upstream.messages)).to.include('Remember the code 4417.').and.include('Noted: the code is 4417.');

    const items = await call('GET', `/v1/conversations/${conversation}/items?order=asc`);
    expect(items.body.data.map((item: { role: string }) => item.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
  });
});
