// Stateful Responses with the official `openai` SDK, as OpenAI's docs show
// them: `store` left at its default (true), `previous_response_id` to carry
// a conversation, `responses.retrieve` / `delete` / `inputItems.list`,
// `store: false` keeping nothing, and the Conversations API with the
// `conversation` parameter. Whatever the client leaves to the gateway's store
// must reach the upstream as the whole conversation, in the upstream's own
// protocol; ids are the owning account's only, another account gets 404.
import { expect } from 'chai';
import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { createAccount, createKey } from '../support/app';
import type { FakeUpstream } from '../support/fake-upstreams';
import {
  expectApiError,
  KEY_SCOPE,
  recordingFetch,
  startKeyedGateway,
  transcript,
  usageDetail,
  type KeyedGateway,
  type UpstreamProtocol,
} from './e2e-support';

const MODEL: Record<UpstreamProtocol | 'mock', string> = { responses: 'm-responses', anthropic: 'm-anthropic', openai: 'm-openai', mock: 'm-mock' };
const PROTOCOLS: UpstreamProtocol[] = ['responses', 'anthropic', 'openai'];

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

/** The response's `store`, which OpenAI returns and the SDK's type leaves out. */
const storeOf = (response: object): unknown => (response as { store?: unknown }).store;

/** The OpenAI error envelope the gateway answers with. */
interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

describe('e2e: stateful Responses through the openai SDK', function () {
  this.timeout(60_000);
  let gateway: KeyedGateway;
  /** A key of another account, with the same model scope. */
  let otherSecret: string;

  before(async () => {
    gateway = await startKeyedGateway({ responses: true });
    const other = await createAccount(gateway.t);
    otherSecret = (await createKey(gateway.t, other.token, { model_scope: [...KEY_SCOPE, 'm-responses'] })).api_key;
  });

  after(async () => {
    await gateway?.close();
  });

  beforeEach(() => {
    for (const protocol of PROTOCOLS) fake(protocol).unscript();
  });

  const fake = (protocol: UpstreamProtocol): FakeUpstream => (protocol === 'responses' ? gateway.fakes.responses! : gateway.fakes[protocol]);
  const client = (secret = gateway.secret, fetch?: typeof globalThis.fetch) =>
    new OpenAI({ apiKey: secret, baseURL: `${gateway.t.baseUrl}/v1`, maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const notFound = (call: () => Promise<unknown>) => expectApiError(call, OpenAI.NotFoundError, 404, 'x-request-id');
  const upstreamCalls = () => PROTOCOLS.reduce((sum, protocol) => sum + fake(protocol).requests.length, 0);

  /** What the upstream's last request held, and that the gateway resolved the state rather than forwarding it. */
  function lastUpstreamTurns(protocol: UpstreamProtocol): string[] {
    const body = fake(protocol).requests.at(-1)!.body;
    if (protocol === 'responses') expect(body, 'state fields left for the upstream').to.not.have.any.keys('previous_response_id', 'conversation');
    return transcript(protocol, body);
  }

  describe('previous_response_id', () => {
    for (const protocol of PROTOCOLS) {
      it(`carries the conversation to the ${protocol} upstream: each turn's user text and the assistant's answers, over a chain of three`, async () => {
        fake(protocol).script({ text: 'Nice to meet you, Ada.' }, { text: 'Your name is Ada.' }, { text: 'ADA' });
        const openai = client();
        const first = await openai.responses.create({ model: MODEL[protocol], input: 'My name is Ada.' });
        expect(storeOf(first), 'store defaults to true').to.equal(true);
        expect(first.previous_response_id ?? null).to.equal(null);

        const second = await openai.responses.create({ model: MODEL[protocol], previous_response_id: first.id, input: 'What is my name?' });
        expect(second.output_text).to.equal('Your name is Ada.');
        expect(second.previous_response_id).to.equal(first.id);
        expect(second.id).to.not.equal(first.id);
        const twoTurns = ['user:My name is Ada.', 'assistant:Nice to meet you, Ada.', 'user:What is my name?'];
        expect(lastUpstreamTurns(protocol)).to.deep.equal(twoTurns);

        await openai.responses.create({ model: MODEL[protocol], previous_response_id: second.id, input: 'Spell it in capitals.' });
        expect(lastUpstreamTurns(protocol)).to.deep.equal([...twoTurns, 'assistant:Your name is Ada.', 'user:Spell it in capitals.']);
      });

      it(`runs a tool round on ${protocol} by sending only the function_call_output: the upstream gets the question and the call too`, async () => {
        const callId = `call_prev_${protocol}`;
        fake(protocol).script({ toolUse: { id: callId, name: 'get_weather', input: { city: 'Paris' } } }, { text: 'Sunny in Paris.' });
        const openai = client();
        const first = await openai.responses.create({ model: MODEL[protocol], input: 'Weather in Paris?', tools: [WEATHER] });
        const call = first.output.find((item) => item.type === 'function_call');
        expect(call, JSON.stringify(first.output)).to.deep.include({ call_id: callId, name: 'get_weather' });

        const second = await openai.responses.create({
          model: MODEL[protocol],
          previous_response_id: first.id,
          tools: [WEATHER],
          input: [{ type: 'function_call_output', call_id: callId, output: '22°C, sunny' }],
        });
        expect(second.output_text).to.equal('Sunny in Paris.');
        expect(lastUpstreamTurns(protocol)).to.deep.equal(['user:Weather in Paris?', `call:${callId}:get_weather`, `result:${callId}:22°C, sunny`]);
      });
    }

    it('continues a response of a reasoning Responses upstream: the reasoning goes back replayable (with its encrypted_content)', async () => {
      // See the Vercel suite: with store: false upstream, OpenAI takes back reasoning only with encrypted_content.
      fake('responses').script({ thinking: 'Ada is a name.', text: 'Hello Ada.' }, { text: 'Ada.' });
      const openai = client();
      const first = await openai.responses.create({ model: MODEL.responses, input: 'I am Ada.' });
      expect(first.output.map((item) => item.type)).to.deep.equal(['reasoning', 'message']);
      await openai.responses.create({ model: MODEL.responses, previous_response_id: first.id, input: 'Who am I?' });
      const input = fake('responses').requests.at(-1)!.body.input as Array<{ type?: string; encrypted_content?: unknown }>;
      expect(lastUpstreamTurns('responses')).to.deep.equal(['user:I am Ada.', 'assistant:Hello Ada.', 'user:Who am I?']);
      expect(input.filter((item) => item.type === 'reasoning' && typeof item.encrypted_content !== 'string'), 'unreplayable reasoning').to.deep.equal([]);
    });

    it('continues a streamed response: what was streamed is stored as the client saw it', async () => {
      fake('anthropic').script({ text: 'Streamed hello to you.' }, { text: 'Yes.' });
      const openai = client();
      const stream = openai.responses.stream({ model: MODEL.anthropic, input: 'Stream me a greeting.' });
      for await (const _event of stream) void _event;
      const streamed = await stream.finalResponse();
      expect(streamed.output_text).to.equal('Streamed hello to you.');
      expect((await openai.responses.retrieve(streamed.id)).output_text).to.equal('Streamed hello to you.');
      await openai.responses.create({ model: MODEL.anthropic, previous_response_id: streamed.id, input: 'Was that a greeting?' });
      expect(lastUpstreamTurns('anthropic')).to.deep.equal(['user:Stream me a greeting.', 'assistant:Streamed hello to you.', 'user:Was that a greeting?']);
    });

    it('keeps what the guardrails let through: the follow-up, retrieve and input items never show the redacted number', async () => {
      const mobile = '13912345678';
      fake('anthropic').script({ text: `Call ${mobile} now.` }, { text: 'Done.' });
      const openai = client();
      const first = await openai.responses.create({ model: MODEL.anthropic, input: `My number is ${mobile}.` });
      expect(first.output_text).to.equal('Call [REDACTED:cn-mobile] now.');
      await openai.responses.create({ model: MODEL.anthropic, previous_response_id: first.id, input: 'Thanks.' });
      expect(fake('anthropic').requests.at(-1)!.rawBody).to.not.contain(mobile);
      expect(lastUpstreamTurns('anthropic')[1]).to.equal('assistant:Call [REDACTED:cn-mobile] now.');
      expect(JSON.stringify(await openai.responses.retrieve(first.id))).to.not.contain(mobile);
      expect(JSON.stringify((await openai.responses.inputItems.list(first.id)).data)).to.not.contain(mobile);
    });

    it('bills the stored context as input, and links each usage record to its response id', async () => {
      // The built-in mock counts the prompt it is given, so the follow-up's input shows what the gateway expanded.
      const openai = client();
      const long = `Remember these words: ${'pebble lantern orchard '.repeat(400)}`;
      const { data: first, request_id: firstRequest } = await openai.responses.create({ model: MODEL.mock, input: long }).withResponse();
      const { data: second, request_id: secondRequest } = await openai.responses
        .create({ model: MODEL.mock, previous_response_id: first.id, input: 'Which words?' })
        .withResponse();
      expect(first.usage!.input_tokens).to.be.greaterThan(1_000);
      expect(second.usage!.input_tokens, 'follow-up input counts the stored turn').to.be.at.least(first.usage!.input_tokens);

      const records = (await usageDetail(gateway.t, gateway.owner.token, gateway.keyId)).items;
      const record = (requestId: string | null) => records.find((item) => item.request_id === requestId) as unknown as Record<string, unknown> | undefined;
      expect(record(firstRequest)).to.include({ response_id: first.id });
      expect(record(secondRequest)).to.include({ response_id: second.id, total_tokens: second.usage!.total_tokens });
    });

    it('answers an unknown id with 404 in OpenAI’s error shape, naming previous_response_id, without an upstream call', async () => {
      const before = upstreamCalls();
      const response = await gateway.post('/v1/responses', { model: MODEL.responses, previous_response_id: 'resp_0123456789abcdef0123456789abcdef', input: 'hi' });
      expect(response.status).to.equal(404);
      const body = (await response.json()) as OpenAIErrorBody;
      expect(body.error).to.include({ type: 'invalid_request_error', param: 'previous_response_id' });
      expect(body.error.message).to.be.a('string').and.not.equal('');
      expect(upstreamCalls()).to.equal(before);
      await notFound(() => client().responses.retrieve('resp_0123456789abcdef0123456789abcdef'));
    });
  });

  describe('retrieve, input items, delete', () => {
    const INPUT: ResponseInputItem[] = [
      { role: 'user', content: 'First line.' },
      { role: 'user', content: [{ type: 'input_text', text: 'Second line.' }] },
      { role: 'user', content: 'Third line.' },
    ];
    const texts = (items: Array<{ type: string }>) =>
      items.map((item) => {
        expect(item.type).to.equal('message');
        const content = (item as unknown as { content: Array<{ type: string; text: string }> }).content;
        expect(content, 'content as input_text parts').to.be.an('array');
        return content.map((part) => `${part.type}:${part.text}`).join('|');
      });

    it('retrieves a stored response as it was returned', async () => {
      fake('responses').script({ text: 'Three lines read.' });
      const openai = client();
      const created = await openai.responses.create({ model: MODEL.responses, instructions: 'Be brief.', input: INPUT });
      const retrieved = await openai.responses.retrieve(created.id);
      expect(retrieved).to.deep.include({ id: created.id, object: 'response', status: 'completed', model: created.model, store: true });
      expect(retrieved.output).to.deep.equal(created.output);
      expect(retrieved.output_text).to.equal('Three lines read.');
    });

    it('lists the input items: newest first by default, in order with order=asc, paged by limit and after', async () => {
      const openai = client();
      const created = await openai.responses.create({ model: MODEL.mock, input: INPUT });
      const inOrder = ['input_text:First line.', 'input_text:Second line.', 'input_text:Third line.'];

      const asc = await openai.responses.inputItems.list(created.id, { order: 'asc' });
      expect(texts(asc.data)).to.deep.equal(inOrder);
      expect(asc.data.map((item) => item.id).every((id) => typeof id === 'string' && id !== '')).to.equal(true);
      expect(asc.has_more).to.equal(false);
      const byDefault = await openai.responses.inputItems.list(created.id);
      expect(texts(byDefault.data)).to.deep.equal(inOrder.toReversed());

      const firstPage = await openai.responses.inputItems.list(created.id, { order: 'asc', limit: 1 });
      expect(firstPage.data).to.have.length(1);
      expect(firstPage.has_more).to.equal(true);
      const paged = [];
      for await (const item of openai.responses.inputItems.list(created.id, { order: 'asc', limit: 1 })) paged.push(item);
      expect(texts(paged)).to.deep.equal(inOrder);

      const raw = await fetch(`${gateway.t.baseUrl}/v1/responses/${created.id}/input_items?order=asc`, { headers: { authorization: `Bearer ${gateway.secret}` } });
      const list = (await raw.json()) as { object: string; data: Array<{ id: string }>; first_id: string; last_id: string; has_more: boolean };
      expect(list).to.include({ object: 'list', first_id: asc.data[0]!.id, last_id: asc.data.at(-1)!.id, has_more: false });
    });

    it('deletes: the answer names the response; then retrieve, input items, a second delete and previous_response_id get 404', async () => {
      const openai = client();
      const created = await openai.responses.create({ model: MODEL.mock, input: 'Forget me.' });
      const deleted = await openai.responses.delete(created.id).asResponse();
      expect(deleted.status).to.equal(200);
      expect(await deleted.json()).to.deep.equal({ id: created.id, object: 'response', deleted: true });

      await notFound(() => openai.responses.retrieve(created.id));
      await notFound(() => openai.responses.inputItems.list(created.id));
      await notFound(() => openai.responses.delete(created.id));
      const { error } = await notFound(() => openai.responses.create({ model: MODEL.mock, previous_response_id: created.id, input: 'Still there?' }));
      expect(error.param).to.equal('previous_response_id');
    });
  });

  describe('store: false', () => {
    it('keeps nothing: the response says so, retrieve gets 404, and continuing it gets 404 without an upstream call', async () => {
      fake('responses').script({ text: 'Not kept.' });
      const openai = client();
      const created = await openai.responses.create({ model: MODEL.responses, input: 'Do not keep this.', store: false });
      expect(storeOf(created)).to.equal(false);
      expect(created.output_text).to.equal('Not kept.');
      await notFound(() => openai.responses.retrieve(created.id));
      await notFound(() => openai.responses.inputItems.list(created.id));
      const before = upstreamCalls();
      const { error } = await notFound(() => openai.responses.create({ model: MODEL.responses, previous_response_id: created.id, input: 'And now?' }));
      expect(error).to.include({ type: 'invalid_request_error', param: 'previous_response_id' });
      expect(upstreamCalls()).to.equal(before);
    });
  });

  describe('another account', () => {
    it('gets 404 for retrieve, input items, delete and previous_response_id of a response it does not own, which stays intact', async () => {
      fake('responses').script({ text: 'Owner only.' });
      const created = await client().responses.create({ model: MODEL.responses, input: 'A private question.' });
      const stranger = client(otherSecret);
      await notFound(() => stranger.responses.retrieve(created.id));
      await notFound(() => stranger.responses.inputItems.list(created.id));
      await notFound(() => stranger.responses.delete(created.id));
      const before = upstreamCalls();
      const { error } = await notFound(() => stranger.responses.create({ model: MODEL.responses, previous_response_id: created.id, input: 'What did they ask?' }));
      expect(error).to.include({ type: 'invalid_request_error', param: 'previous_response_id' });
      expect(error.message).to.not.contain('A private question.');
      expect(upstreamCalls()).to.equal(before);
      expect((await client().responses.retrieve(created.id)).output_text).to.equal('Owner only.');
    });

    it('gets 400/404 naming the input item for an item_reference to another account’s item, without an upstream call', async () => {
      fake('responses').script({ text: 'A private answer.' });
      const created = await client().responses.create({ model: MODEL.responses, input: 'Tell me a secret.' });
      const itemId = created.output[0]!.id!;
      const before = upstreamCalls();
      const response = await fetch(`${gateway.t.baseUrl}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${otherSecret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL.responses, input: [{ role: 'user', content: 'Go on.' }, { type: 'item_reference', id: itemId }] }),
      });
      expect(response.status).to.be.oneOf([400, 404]);
      const body = (await response.json()) as OpenAIErrorBody;
      expect(body.error.type).to.equal('invalid_request_error');
      expect(body.error.param).to.match(/^input(\[1\]|\.1)(\.id)?$/);
      expect(JSON.stringify(body)).to.not.contain('A private answer.');
      expect(upstreamCalls()).to.equal(before);
    });
  });

  describe('client-chosen item ids', () => {
    // Ids the client picks are kept with the items; a bound on them is a 400 naming the field, never a
    // 500 or a reply that says `store: true` for a response that was not kept.
    const longId = `msg_${'x'.repeat(300)}`;

    it('a response whose input item has a long id is either refused naming input[0].id, or kept', async () => {
      const response = await gateway.post('/v1/responses', { model: MODEL.mock, input: [{ type: 'message', role: 'user', content: 'Hi.', id: longId }] });
      if (response.status === 200) {
        const created = (await response.json()) as { id: string };
        expect((await client().responses.retrieve(created.id)).id, 'said stored, so retrievable').to.equal(created.id);
      } else {
        expect(response.status).to.equal(400);
        expect(((await response.json()) as OpenAIErrorBody).error.param).to.equal('input[0].id');
      }
    });

    it('a conversation item with a long id is either refused naming items[0].id, or kept', async () => {
      const conversation = await client().conversations.create({});
      const response = await fetch(`${gateway.t.baseUrl}/v1/conversations/${conversation.id}/items`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ type: 'message', role: 'user', content: 'Hi.', id: longId }] }),
      });
      if (response.status === 200) {
        expect((await client().conversations.items.list(conversation.id)).data.map((item) => item.id)).to.deep.equal([longId]);
      } else {
        expect(response.status).to.equal(400);
        expect(((await response.json()) as OpenAIErrorBody).error.param).to.equal('items[0].id');
      }
    });

    it('an item answered as added to a conversation is in it: a repeated id is refused naming it, or kept', async () => {
      const openai = client();
      const item = (text: string) => ({ type: 'message', role: 'user', content: text, id: 'msg_chosen_by_client' }) as unknown as ResponseInputItem;
      const conversation = await openai.conversations.create({ items: [item('First.')] });
      const response = await fetch(`${gateway.t.baseUrl}/v1/conversations/${conversation.id}/items`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ items: [item('Second.')] }),
      });
      const listed = (await openai.conversations.items.list(conversation.id, { order: 'asc' })).data.map((kept) =>
        kept.type === 'message' ? kept.content.map((part) => ('text' in part ? part.text : '')).join('') : kept.type,
      );
      if (response.status === 200) {
        expect(listed, 'answered as added').to.include('Second.');
      } else {
        expect(response.status).to.equal(400);
        expect(((await response.json()) as OpenAIErrorBody).error.param).to.equal('items[0].id');
        expect(listed).to.deep.equal(['First.']);
      }
    });
  });

  describe('the Conversations API and the conversation parameter', () => {
    it('creates, reads, updates and deletes a conversation and its items', async () => {
      const openai = client();
      const conversation = await openai.conversations.create({ items: [{ role: 'user', content: 'Opening line.' }], metadata: { topic: 'demo' } });
      expect(conversation.id).to.match(/^conv_/);
      expect(conversation).to.deep.include({ object: 'conversation', metadata: { topic: 'demo' } });
      expect(conversation.created_at).to.be.a('number');
      expect(await openai.conversations.retrieve(conversation.id)).to.deep.include({ id: conversation.id, metadata: { topic: 'demo' } });
      expect((await openai.conversations.update(conversation.id, { metadata: { topic: 'changed' } })).metadata).to.deep.equal({ topic: 'changed' });

      const added = await openai.conversations.items.create(conversation.id, {
        items: [
          { role: 'user', content: 'Second line.' },
          { role: 'user', content: 'Third line.' },
        ],
      });
      expect(added.data).to.have.length(2);
      const all = [];
      for await (const item of openai.conversations.items.list(conversation.id, { order: 'asc', limit: 2 })) all.push(item);
      expect(all.map((item) => (item.type === 'message' ? item.content.map((part) => ('text' in part ? part.text : '')).join('') : item.type))).to.deep.equal([
        'Opening line.',
        'Second line.',
        'Third line.',
      ]);
      const newest = await openai.conversations.items.list(conversation.id, { limit: 1 });
      expect(newest.data[0]!.id, 'newest first by default').to.equal(all.at(-1)!.id);
      expect(await openai.conversations.items.retrieve(all[1]!.id!, { conversation_id: conversation.id })).to.deep.include({ id: all[1]!.id });

      const after = await openai.conversations.items.delete(all[1]!.id!, { conversation_id: conversation.id });
      expect(after).to.deep.include({ id: conversation.id, object: 'conversation' });
      const left = (await openai.conversations.items.list(conversation.id, { order: 'asc' })).data.map((item) => item.id);
      expect(left).to.deep.equal([all[0]!.id, all[2]!.id]);

      await notFound(() => client(otherSecret).conversations.retrieve(conversation.id));
      await notFound(() => client(otherSecret).conversations.items.list(conversation.id));
      expect(await openai.conversations.delete(conversation.id)).to.deep.include({ id: conversation.id, object: 'conversation.deleted', deleted: true });
      await notFound(() => openai.conversations.retrieve(conversation.id));
    });

    for (const protocol of ['responses', 'anthropic'] as const) {
      it(`appends each turn to the conversation, and the ${protocol} upstream gets the conversation so far`, async () => {
        fake(protocol).script({ text: 'Teal, noted.' }, { text: 'Your colour is teal.' });
        const { fetch, sent } = recordingFetch();
        const openai = client(gateway.secret, fetch);
        const conversation = await openai.conversations.create({ items: [{ role: 'user', content: 'Hi, I am Bo.' }] });
        const first = await openai.responses.create({ model: MODEL[protocol], conversation: conversation.id, input: 'My colour is teal.' });
        expect(first.conversation?.id).to.equal(conversation.id);
        await openai.responses.create({ model: MODEL[protocol], conversation: { id: conversation.id }, input: 'What is my colour?' });
        expect(sent.filter((request) => request.path === '/v1/responses').every((request) => request.body.conversation !== undefined)).to.equal(true);
        expect(lastUpstreamTurns(protocol)).to.deep.equal(['user:Hi, I am Bo.', 'user:My colour is teal.', 'assistant:Teal, noted.', 'user:What is my colour?']);

        const items = (await openai.conversations.items.list(conversation.id, { order: 'asc' })).data;
        expect(items.map((item) => (item.type === 'message' ? item.role : item.type))).to.deep.equal(['user', 'user', 'assistant', 'user', 'assistant']);
      });
    }
  });
});
