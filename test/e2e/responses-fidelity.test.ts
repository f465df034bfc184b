// The Responses form under the protocol fidelity rules (docs/architecture.md §4): to a
// Responses-speaking upstream the caller's body passes through and the reply
// is relayed (upstream item ids, fields and events kept); across protocols
// what has a counterpart is translated (namespaced and free-text tools,
// reasoning ↔ thinking with its encrypted content), what has none and changes
// nothing the caller relies on is dropped and listed in `x-gateway-dropped`,
// the rest is a 400 naming the field and the deployment's protocol. Input and
// output guardrails read the Responses shapes, streamed events included.
import { expect } from 'chai';
import OpenAI from 'openai';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { TestApp } from '../support/app';
import type { FakeUpstream } from '../support/fake-upstreams';
import { parseSse } from '../support/sse-client';
import { startKeyedGateway, usageDetail, type KeyedGateway } from './e2e-support';

const MOBILE = '13912345678';
const EMAIL = 'li.lei@example.cn';

/** What Codex CLI 0.169 sends (trimmed): developer and user items, functions, a namespace, a hosted tool and its own fields. */
function codexBody(model: string): Record<string, unknown> {
  return {
    model,
    stream: false,
    input: [
      { type: 'message', id: 'msg_dev_1', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent running in the Codex CLI.' }] },
      { type: 'message', id: 'msg_user_1', role: 'user', content: [{ type: 'input_text', text: '<environment_context>cwd: /tmp</environment_context>' }] },
      { type: 'message', id: 'msg_user_2', role: 'user', content: [{ type: 'input_text', text: 'Close agent 7.' }] },
    ],
    tools: [
      { type: 'function', name: 'exec_command', description: 'Runs a command.', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
      {
        type: 'namespace',
        name: 'multi_agent_v1',
        description: 'Tools for spawning and managing sub-agents.',
        tools: [{ type: 'function', name: 'close_agent', description: 'Close an agent.', strict: false, parameters: { type: 'object', properties: { target: { type: 'string' } } } }],
      },
      { type: 'custom', name: 'apply_patch', description: 'Apply a patch (free text).' },
      { type: 'web_search', external_web_access: false },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { summary: 'auto' },
    store: false,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'session-1',
    client_metadata: { thread_id: 'thread-1' },
  };
}

describe('e2e: the Responses form under the fidelity rules', function () {
  this.timeout(60_000);
  let gateway: KeyedGateway;
  let t: TestApp;
  let fakes: Record<'anthropic' | 'openai' | 'responses', FakeUpstream>;

  before(async () => {
    gateway = await startKeyedGateway({ responses: true });
    t = gateway.t;
    fakes = { ...gateway.fakes, responses: gateway.fakes.responses! };
  });

  after(async () => {
    await gateway?.close();
  });

  const openai = () => new OpenAI({ apiKey: gateway.secret, baseURL: `${t.baseUrl}/v1`, maxRetries: 0 });
  const post = (body: unknown) => gateway.post('/v1/responses', body);
  const lastBody = (kind: keyof typeof fakes) => fakes[kind].requests.at(-1)!.body;

  describe('pass-through to a Responses-speaking upstream', () => {
    it('forwards the body as sent but for the model and store: false, hosted tools and unknown fields included', async () => {
      const body = { ...codexBody('m-responses'), future_field: { x: 1 }, metadata: { team: 'infra' } };
      const response = await post(body);
      expect(response.status, await response.clone().text()).to.equal(200);
      expect(response.headers.get('x-gateway-dropped')).to.equal(null);
      expect(fakes.responses.requests.at(-1)!.path).to.equal('/v1/responses');
      expect(lastBody('responses')).to.deep.equal({ ...body, model: 'gpt-fake-responses', store: false, stream: false });
      expect(fakes.responses.requests.at(-1)!.headers.authorization).to.equal('Bearer sk-openai-e2e-provider-key');
    });

    it('sends store: false when the caller left store out (the API would store by default)', async () => {
      await openai().responses.create({ model: 'm-responses', input: 'hi' });
      expect(lastBody('responses').store).to.equal(false);
    });

    it("relays the upstream's items, ids and fields: reasoning with encrypted content, message, function call, service_tier, usage details", async () => {
      fakes.responses.script({ thinking: 'Think first.', text: 'Here.', toolUse: { id: 'call_r1', name: 'exec_command', input: { cmd: 'ls' } }, usage: { input: 100, cacheRead: 60, output: 9 } });
      const response = await openai().responses.create({ model: 'm-responses', input: 'go', include: ['reasoning.encrypted_content'] });
      expect(response.output.map((item) => [item.type, item.id])).to.deep.equal([
        ['reasoning', 'rs_fake_3'],
        ['message', 'msg_fake_3'],
        ['function_call', 'fc_fake_3'],
      ]);
      const reasoning = response.output[0];
      expect(reasoning).to.deep.include({ summary: [{ type: 'summary_text', text: 'Think first.' }], encrypted_content: 'enc_fake_3' });
      expect(response.output[2]).to.deep.include({ call_id: 'call_r1', name: 'exec_command', arguments: '{"cmd":"ls"}' });
      expect((response as unknown as Record<string, unknown>).service_tier).to.equal('default');
      expect(response.usage).to.deep.include({ input_tokens: 100, output_tokens: 9, input_tokens_details: { cached_tokens: 60 }, output_tokens_details: { reasoning_tokens: 3 } });
      expect(response.id).to.match(/^resp_/).and.not.equal('resp_fake_3');
    });

    it('relays a streamed reply event by event, unknown events and item kinds included, renumbered', async () => {
      const search = { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'weather' } };
      const message = { id: 'msg_up_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Sunny.', annotations: [] }] };
      const created = { id: 'resp_up', object: 'response', created_at: 1, status: 'in_progress', model: 'gpt-fake-responses', output: [], service_tier: 'priority', usage: null };
      fakes.responses.script({
        rawEvents: [
          { type: 'response.created', response: created },
          { type: 'response.in_progress', response: created },
          { type: 'response.output_item.added', output_index: 0, item: { ...search, status: 'in_progress' } },
          { type: 'response.web_search_call.in_progress', output_index: 0, item_id: 'ws_1' },
          { type: 'response.web_search_call.searching', output_index: 0, item_id: 'ws_1' },
          { type: 'response.web_search_call.completed', output_index: 0, item_id: 'ws_1' },
          { type: 'response.output_item.done', output_index: 0, item: search },
          { type: 'response.output_item.added', output_index: 1, item: { ...message, status: 'in_progress', content: [] } },
          { type: 'response.content_part.added', output_index: 1, item_id: 'msg_up_1', content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
          { type: 'response.output_text.delta', output_index: 1, item_id: 'msg_up_1', content_index: 0, delta: 'Sun' },
          { type: 'response.output_text.delta', output_index: 1, item_id: 'msg_up_1', content_index: 0, delta: 'ny.' },
          { type: 'response.output_text.done', output_index: 1, item_id: 'msg_up_1', content_index: 0, text: 'Sunny.' },
          { type: 'response.content_part.done', output_index: 1, item_id: 'msg_up_1', content_index: 0, part: message.content[0] },
          { type: 'response.output_item.done', output_index: 1, item: message },
          {
            type: 'response.completed',
            response: { ...created, status: 'completed', output: [search, message], usage: { input_tokens: 20, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, total_tokens: 22 } },
          },
        ],
      });
      const stream = openai().responses.stream({ model: 'm-responses', input: 'weather?', tools: [{ type: 'web_search' }] });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const final = await stream.finalResponse();
      // The output filter may hold a word back until the next delta shows it ends: deltas can merge.
      const types = events.map((e) => e.type).filter((type, i, all) => type !== 'response.output_text.delta' || all[i - 1] !== type);
      expect(types).to.deep.equal([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.web_search_call.in_progress',
        'response.web_search_call.searching',
        'response.web_search_call.completed',
        'response.output_item.done',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
      const completed = events.at(-1);
      expect(completed?.type === 'response.completed' && completed.response.output).to.deep.equal([search, message]);
      expect((final as unknown as Record<string, unknown>).service_tier).to.equal('priority');
      expect(final.output_text).to.equal('Sunny.');
    });
  });

  describe('translated to Anthropic and Chat Completions upstreams', () => {
    it("translates Codex's request for Anthropic: developer items → system, namespace → flat names, custom → a one-text function; lists what it drops", async () => {
      fakes.anthropic.script({ text: 'ok' });
      const response = await post(codexBody('m-anthropic'));
      expect(response.status, await response.clone().text()).to.equal(200);
      const sent = lastBody('anthropic');
      expect(sent.system).to.equal('You are a coding agent running in the Codex CLI.');
      expect(sent.messages).to.deep.equal([
        {
          role: 'user',
          content: [
            { type: 'text', text: '<environment_context>cwd: /tmp</environment_context>' },
            { type: 'text', text: 'Close agent 7.' },
          ],
        },
      ]);
      expect(sent.tools.map((tool: any) => tool.name)).to.deep.equal(['exec_command', 'multi_agent_v1__close_agent', 'apply_patch']);
      expect(sent.tools[2].input_schema).to.deep.include({ required: ['input'] });
      expect(sent.tool_choice).to.deep.equal({ type: 'auto' });
      const dropped = response.headers.get('x-gateway-dropped') ?? '';
      expect(dropped).to.contain('tools.3 (web_search)').and.contain('prompt_cache_key').and.contain('client_metadata');
      expect(dropped).not.to.contain('include');
    });

    for (const kind of ['anthropic', 'openai'] as const) {
      it(`answers a call of a namespaced tool with its namespace and own name, and takes it back (${kind})`, async () => {
        fakes[kind].script({ toolUse: { id: 'call_ns', name: 'multi_agent_v1__close_agent', input: { target: '7' } } }, { text: 'Closed.' });
        const first = (await (await post(codexBody(`m-${kind}`))).json()) as { output: any[] };
        const call = first.output.find((item) => item.type === 'function_call');
        expect(call).to.deep.include({ type: 'function_call', call_id: 'call_ns', name: 'close_agent', namespace: 'multi_agent_v1', arguments: '{"target":"7"}' });

        const body = codexBody(`m-${kind}`);
        (body.input as unknown[]).push(call, { type: 'function_call_output', call_id: 'call_ns', output: 'closed' });
        expect((await post(body)).status).to.equal(200);
        const sent = lastBody(kind);
        if (kind === 'anthropic') expect(sent.messages.at(-2).content[0]).to.deep.include({ type: 'tool_use', name: 'multi_agent_v1__close_agent', id: 'call_ns' });
        else expect(sent.messages.at(-2).tool_calls[0].function.name).to.equal('multi_agent_v1__close_agent');
      });
    }

    it('answers a free-text tool call as a custom_tool_call item, and takes its output back', async () => {
      const patch = '*** Begin Patch\n*** Add File: a.txt\n+hello "x"\n*** End Patch';
      fakes.anthropic.script({ toolUse: { id: 'call_patch', name: 'apply_patch', input: { input: patch } } }, { text: 'Applied.' });
      const stream = openai().responses.stream(codexBody('m-anthropic') as any);
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const final = await stream.finalResponse();
      const item = final.output.find((o) => o.type === 'custom_tool_call');
      expect(item).to.deep.include({ type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: patch });
      expect(events.map((e) => e.type)).to.include('response.custom_tool_call_input.done');

      const body = codexBody('m-anthropic');
      (body.input as unknown[]).push(item, { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' });
      expect((await post(body)).status).to.equal(200);
      const sent = lastBody('anthropic');
      expect(sent.messages.at(-2).content[0]).to.deep.equal({ type: 'tool_use', id: 'call_patch', name: 'apply_patch', input: { input: patch } });
      expect(sent.messages.at(-1).content[0]).to.deep.include({ type: 'tool_result', tool_use_id: 'call_patch' });
    });

    it('reasoning.effort asks for thinking: the thinking tier, Anthropic thinking, a reasoning item whose encrypted content is the signature, sent back as signed thinking', async () => {
      fakes.anthropic.script({ thinking: 'Weighing options.', text: 'Pick B.' }, { text: 'Done.' });
      const client = openai();
      const first = await client.responses.create({ model: 'm-anthropic', input: 'A or B?', max_output_tokens: 4000, reasoning: { effort: 'high' }, include: ['reasoning.encrypted_content'] });
      const sent = lastBody('anthropic');
      expect(sent.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 3999 });
      const reasoning = first.output[0];
      expect(reasoning).to.deep.include({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Weighing options.' }] });
      expect(reasoning?.type === 'reasoning' && reasoning.encrypted_content).to.match(/^sig_fake_/);
      expect((first.usage as unknown as Record<string, unknown>).thinking).to.equal(true);

      const replay = [{ role: 'user', content: 'A or B?' }, ...first.output, { role: 'user', content: 'Sure?' }] as ResponseInputItem[];
      await client.responses.create({ model: 'm-anthropic', input: replay, reasoning: { effort: 'high' } });
      expect(lastBody('anthropic').messages[1].content[0]).to.deep.equal({ type: 'thinking', thinking: 'Weighing options.', signature: (reasoning as any).encrypted_content });
    });

    it('leaves encrypted content out when the caller did not ask for it; effort none never thinks', async () => {
      fakes.anthropic.script({ thinking: 'Hmm.', text: 'Yes.' }, { text: 'No thinking.' });
      const withThinking = await openai().responses.create({ model: 'm-anthropic', input: 'ok?', reasoning: { effort: 'low' } });
      expect(withThinking.output[0]).to.not.have.property('encrypted_content');
      const none = await openai().responses.create({ model: 'm-anthropic', input: 'ok?', reasoning: { effort: 'none' } });
      expect(lastBody('anthropic')).to.not.have.property('thinking');
      expect((none.usage as unknown as Record<string, unknown>).thinking).to.equal(false);
    });

    it('gives a Chat Completions upstream the effort as reasoning_effort', async () => {
      fakes.openai.script({ thinking: 'chain', text: 'ok' });
      const response = await openai().responses.create({ model: 'm-openai', input: 'x', reasoning: { effort: 'medium' } });
      expect(lastBody('openai')).to.include({ reasoning_effort: 'medium' });
      expect(response.output.map((o) => o.type)).to.deep.equal(['reasoning', 'message']);
    });

    for (const [what, extra, field] of [
      ['a tool_choice it cannot express', { tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } }, 'tool_choice'],
      ['an image by file id', { input: [{ role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', file_id: 'file-1' }] }] }, 'input.0.content.1.file_id'],
      ['a stored prompt template', { prompt: { id: 'pmpt_1' } }, 'prompt'],
    ] as const) {
      it(`refuses ${what} with a 400 naming the field and the protocol, before any upstream call`, async () => {
        const calls = fakes.anthropic.requests.length;
        const response = await post({ model: 'm-anthropic', input: 'hi', ...extra });
        expect(response.status).to.equal(400);
        const { error } = (await response.json()) as { error: { param: string; message: string } };
        expect(error.param).to.equal(field);
        expect(error.message).to.contain('anthropic protocol');
        expect(fakes.anthropic.requests.length).to.equal(calls);
      });
    }

    it('passes the same refused field through to a Responses-speaking upstream', async () => {
      const response = await post({ model: 'm-responses', input: 'hi', tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } });
      expect(response.status).to.equal(200);
      expect(lastBody('responses').tool_choice).to.deep.equal({ type: 'allowed_tools', mode: 'auto', tools: [] });
    });

    it('answers 404 naming the item for a reference to an item the account never stored', async () => {
      const response = await post({ model: 'm-responses', input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_1' }] });
      expect(response.status).to.equal(404);
      expect(((await response.json()) as { error: { param: string } }).error.param).to.equal('input[1].id');
    });

    it('answers max_output_tokens reached as an incomplete response', async () => {
      fakes.anthropic.script({ text: 'Cut sho', stopReason: 'max_tokens' });
      const response = await openai().responses.create({ model: 'm-anthropic', input: 'long story', max_output_tokens: 20 });
      expect(response.status).to.equal('incomplete');
      expect(response.incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
    });
  });

  describe('guardrails', () => {
    it('input: redacts texts in input items and tool outputs before the upstream reads them, keeping arguments valid JSON', async () => {
      fakes.anthropic.script({ text: 'ok' });
      const response = await post({
        model: 'm-anthropic',
        instructions: `Escalate to ${EMAIL}.`,
        input: [
          { role: 'user', content: [{ type: 'input_text', text: `My phone is ${MOBILE}.` }] },
          { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: JSON.stringify({ phone: MOBILE }) },
          { type: 'function_call_output', call_id: 'c1', output: `Owner mail: ${EMAIL}` },
        ],
      });
      expect(response.status).to.equal(200);
      const raw = fakes.anthropic.requests.at(-1)!.rawBody;
      expect(raw).not.to.contain(MOBILE).and.not.to.contain(EMAIL);
      const sent = lastBody('anthropic');
      expect(sent.system).to.equal('Escalate to [REDACTED:email].');
      expect(sent.messages[1].content[0].input).to.deep.equal({ phone: '[REDACTED:cn-mobile]' });
    });

    it('output: every streamed event passes the filter; the number never crosses, split across deltas or not', async () => {
      const text = `Call ${MOBILE} now.`;
      fakes.anthropic.script({ text, chunks: text.match(/[\s\S]{1,3}/g)! });
      const response = await post({ model: 'm-anthropic', input: 'support number?', stream: true });
      const raw = await response.text();
      expect(raw).not.to.contain(MOBILE);
      const events = parseSse(raw);
      const deltas = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta as string);
      expect(deltas.join('')).to.equal('Call [REDACTED:cn-mobile] now.');
      const done = events.find((e) => e.event === 'response.output_text.done');
      expect(done?.data.text).to.equal('Call [REDACTED:cn-mobile] now.');
      const completed = events.at(-1)!;
      expect(completed.event).to.equal('response.completed');
      expect(completed.data.response.output[0].content[0].text).to.equal('Call [REDACTED:cn-mobile] now.');
      // every event: an event line equal to its type, and a sequence number in order
      expect(events.every((e, i) => e.event === e.data.type && e.data.sequence_number === i)).to.equal(true);
    });
  });

  describe('errors', () => {
    it('a failure after the stream began: an error event the client throws, then response.failed; metered as upstream_error', async () => {
      fakes.anthropic.script({ text: 'one two three four', streamError: { afterEvents: 4, type: 'overloaded_error', message: 'Overloaded' } });
      const stream = await openai().responses.create({ model: 'm-anthropic', input: 'count', stream: true });
      let caught: unknown;
      try {
        for await (const _event of stream);
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(OpenAI.APIError);
      expect((caught as Error).message).to.contain('Overloaded');
      const detail = await usageDetail(t, gateway.owner.token, gateway.keyId);
      expect(detail.items[0]).to.include({ form: 'responses', status: 'upstream_error', stream: true });
    });

    it('an unknown model and a model outside the key scope answer in the OpenAI error form', async () => {
      const unknown = await post({ model: 'nope', input: 'hi' });
      expect(unknown.status).to.equal(404);
      expect(((await unknown.json()) as any).error).to.include({ param: 'model', code: 'model_not_found' });
      const outside = await post({ model: 'm-extra', input: 'hi' });
      expect(outside.status).to.equal(403);
      expect(((await outside.json()) as any).error).to.include({ type: 'permission_error', code: 'model_not_in_scope' });
    });

    it('a bad item names its field', async () => {
      const response = await post({ model: 'm-mock', input: [{ type: 'function_call', call_id: 'c', name: 'f' }] });
      expect(response.status).to.equal(400);
      expect(((await response.json()) as any).error.param).to.equal('input.0.arguments');
    });
  });
});
