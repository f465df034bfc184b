// The OpenAI Responses form, POST /v1/responses, as its clients use it: the
// official `openai` SDK (`responses.create`, plain and streamed, with a
// function tool round), the OpenAI Agents SDK in its default (Responses)
// mode with a tool loop, and LangChain with `useResponsesApi`, on every kind
// of upstream: the built-in mock, an
// Anthropic upstream and a Chat Completions upstream (translated), and an
// OpenAI upstream that speaks the Responses API (passed through). Codex CLI
// has its own suite (codex-cli.test.ts).
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { TestAccount, TestApp } from '../support/app';
import type { FakeUpstream } from '../support/fake-upstreams';
import { startKeyedGateway, usageDetail, type KeyedGateway } from './e2e-support';
import { weatherAgent } from './weather-agent';

type Kind = 'mock' | 'anthropic' | 'openai' | 'responses';

const MODEL: Record<Kind, string> = { mock: 'm-mock', anthropic: 'm-anthropic', openai: 'm-openai', responses: 'm-responses' };
const ROUTED: Record<Kind, string> = { mock: 'sim-e2e', anthropic: 'claude-fake', openai: 'gpt-fake', responses: 'gpt-fake-responses' };
const KINDS: Kind[] = ['mock', 'anthropic', 'openai', 'responses'];

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

/** The gateway's extra usage fields beside the Responses ones. */
interface FormUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  cached_input_tokens: number;
  price_tier: string;
  thinking: boolean;
}

describe('e2e: the Responses form (POST /v1/responses)', function () {
  this.timeout(60_000);
  let gateway: KeyedGateway;
  let t: TestApp;
  let owner: TestAccount;
  let secret: string;
  let keyId: string;
  let fakes: Record<'anthropic' | 'openai' | 'responses', FakeUpstream>;

  before(async () => {
    gateway = await startKeyedGateway({ responses: true });
    ({ t, owner, secret, keyId } = gateway);
    fakes = { ...gateway.fakes, responses: gateway.fakes.responses! };
  });

  after(async () => {
    await gateway?.close();
  });

  const openai = () => new OpenAI({ apiKey: secret, baseURL: `${t.baseUrl}/v1`, maxRetries: 0 });
  const post = (body: unknown) => gateway.post('/v1/responses', body);
  const usageOf = (usage: unknown) => usage as FormUsage;

  async function recordOf(requestId: string | null | undefined) {
    const detail = await usageDetail(t, owner.token, keyId);
    const item = detail.items.find((i) => i.request_id === requestId);
    expect(item, `usage record of ${requestId}`).to.not.equal(undefined);
    return item!;
  }

  describe('plain and streamed, on every kind of upstream', () => {
    for (const kind of KINDS) {
      it(`answers responses.create on ${kind}, with usage in the Responses shape and one usage record`, async () => {
        if (kind !== 'mock') fakes[kind].script({ text: 'Bonjour tout le monde', usage: { input: 40, output: 5, cacheRead: 30 } });
        const { data: response, request_id } = await openai()
          .responses.create({ model: MODEL[kind], instructions: 'Be brief.', input: 'Say hello in French.', max_output_tokens: 200 })
          .withResponse();
        expect(response.object).to.equal('response');
        expect(response.status).to.equal('completed');
        expect(response.id).to.match(/^resp_/);
        expect(response.model).to.equal(ROUTED[kind]);
        expect(response.output_text.length).to.be.greaterThan(0);
        if (kind !== 'mock') expect(response.output_text).to.equal('Bonjour tout le monde');
        const usage = usageOf(response.usage);
        expect(usage.total_tokens).to.equal(usage.input_tokens + usage.output_tokens);
        expect(usage.input_tokens_details.cached_tokens).to.equal(usage.cached_input_tokens);
        expect(usage.price_tier).to.equal('no_thinking');
        if (kind === 'anthropic') expect(usage).to.include({ input_tokens: 70, cached_input_tokens: 30, output_tokens: 5 });
        if (kind === 'openai') expect(usage).to.include({ input_tokens: 60, cached_input_tokens: 45, output_tokens: 10 }); // unify 1.5 / 2
        if (kind === 'responses') expect(usage).to.include({ input_tokens: 40, cached_input_tokens: 30, output_tokens: 5 });

        const record = await recordOf(request_id);
        expect(record).to.include({ form: 'responses', status: 'ok', stream: false, model: MODEL[kind], routed_model: ROUTED[kind] });
        expect(record.total_tokens).to.equal(usage.total_tokens);
      });

      it(`streams on ${kind}: created, in_progress, item and part events, text deltas, completed with usage; a sequence number on every event`, async () => {
        if (kind !== 'mock') fakes[kind].script({ text: 'one two three', usage: { input: 12, output: 3 } });
        const stream = openai().responses.stream({ model: MODEL[kind], input: [{ role: 'user', content: [{ type: 'input_text', text: 'Count to three.' }] }] });
        const events: ResponseStreamEvent[] = [];
        for await (const event of stream) events.push(event);
        const final = await stream.finalResponse();

        const types = events.map((e) => e.type);
        expect(types.slice(0, 4)).to.deep.equal(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
        expect(types.slice(-4)).to.deep.equal(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
        expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
        const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
        expect(deltas.length).to.be.greaterThan(1);
        expect(deltas.join('')).to.equal(final.output_text);
        if (kind !== 'mock') expect(final.output_text).to.equal('one two three');
        const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
        const usage = usageOf(completed.response.usage);
        expect(usage.output_tokens).to.be.greaterThan(0);
        expect(usage.total_tokens).to.equal(usage.input_tokens + usage.output_tokens);
        expect(final.model).to.equal(ROUTED[kind]);
      });
    }
  });

  describe('function tools', () => {
    for (const kind of ['anthropic', 'openai', 'responses'] as const) {
      it(`runs a tool round on ${kind}: a function_call item, then the output sent back answers it`, async () => {
        fakes[kind].script(
          { toolUse: { id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } }, usage: { input: 30, output: 8 } },
          { text: 'It is sunny in Paris.', usage: { input: 50, output: 6 } },
        );
        const client = openai();
        const input: ResponseInputItem[] = [{ role: 'user', content: 'Weather in Paris?' }];
        const first = await client.responses.create({ model: MODEL[kind], input, tools: [WEATHER], tool_choice: 'auto' });
        const call = first.output.find((item) => item.type === 'function_call');
        expect(call, JSON.stringify(first.output)).to.not.equal(undefined);
        if (call?.type !== 'function_call') throw new Error('no function call');
        expect(call).to.include({ call_id: 'call_w1', name: 'get_weather' });
        expect(JSON.parse(call.arguments)).to.deep.equal({ city: 'Paris' });

        const second = await client.responses.create({
          model: MODEL[kind],
          tools: [WEATHER],
          input: [...input, ...first.output.filter((item) => item.type === 'function_call'), { type: 'function_call_output', call_id: call.call_id, output: '22°C, sunny' }],
        });
        expect(second.output_text).to.equal('It is sunny in Paris.');

        const sent = fakes[kind].requests.at(-1)!.body;
        if (kind === 'anthropic') {
          expect(sent.tools[0]).to.deep.include({ name: 'get_weather', description: 'Weather for a city' });
          expect(sent.messages.at(-2).content).to.deep.equal([{ type: 'tool_use', id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } }]);
          expect(sent.messages.at(-1).content[0]).to.deep.include({ type: 'tool_result', tool_use_id: 'call_w1' });
        } else if (kind === 'openai') {
          expect(sent.tools[0]).to.deep.include({ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: WEATHER.parameters } });
          expect(sent.messages.at(-2).tool_calls[0]).to.deep.include({ id: 'call_w1', type: 'function' });
          expect(sent.messages.at(-1)).to.deep.equal({ role: 'tool', tool_call_id: 'call_w1', content: '22°C, sunny' });
        } else {
          expect(fakes.responses.requests.at(-1)!.path).to.equal('/v1/responses');
          expect(sent.input.at(-1)).to.deep.equal({ type: 'function_call_output', call_id: 'call_w1', output: '22°C, sunny' });
        }
      });
    }

    it('streams a function call: output_item.added, argument deltas, arguments done, output_item.done', async () => {
      fakes.anthropic.script({ toolUse: { id: 'toolu_s1', name: 'get_weather', input: { city: 'Lyon' } } });
      const stream = openai().responses.stream({ model: MODEL.anthropic, input: 'Weather in Lyon?', tools: [WEATHER] });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const final = await stream.finalResponse();
      const types = events.map((e) => e.type);
      expect(types).to.include.members(['response.function_call_arguments.delta', 'response.function_call_arguments.done']);
      const done = events.find((e) => e.type === 'response.function_call_arguments.done');
      expect(done?.type === 'response.function_call_arguments.done' && JSON.parse(done.arguments)).to.deep.equal({ city: 'Lyon' });
      const item = final.output.find((o) => o.type === 'function_call');
      expect(item).to.deep.include({ type: 'function_call', call_id: 'toolu_s1', name: 'get_weather', status: 'completed' });
    });
  });

  describe('stored state', () => {
    for (const [field, value] of [
      ['previous_response_id', 'resp_123'],
      ['conversation', 'conv_1'],
    ] as const) {
      it(`answers 404 naming ${field} for an id the account does not have, without calling the upstream`, async () => {
        const before = fakes.responses.requests.length;
        const response = await post({ model: MODEL.responses, input: 'hi', [field]: value });
        expect(response.status).to.equal(404);
        const body = (await response.json()) as { error: { param: string; message: string; type: string } };
        expect(body.error.param).to.equal(field);
        expect(body.error.type).to.equal('invalid_request_error');
        expect(body.error.message).to.match(/not found/);
        expect(fakes.responses.requests.length).to.equal(before);
      });
    }

    it('refuses background: true with a 400 naming the field, without calling the upstream', async () => {
      const before = fakes.responses.requests.length;
      const response = await post({ model: MODEL.responses, input: 'hi', background: true });
      expect(response.status).to.equal(400);
      const body = (await response.json()) as { error: { param: string; type: string } };
      expect(body.error).to.include({ param: 'background', type: 'invalid_request_error' });
      expect(fakes.responses.requests.length).to.equal(before);
    });

    it('accepts store: false and include: ["reasoning.encrypted_content"] as Codex sends them', async () => {
      const response = await post({ model: MODEL.mock, input: 'hi', store: false, include: ['reasoning.encrypted_content'] });
      expect(response.status).to.equal(200);
      expect(response.headers.get('x-gateway-dropped')).to.equal(null);
    });
  });

  describe('the OpenAI Agents SDK (default Responses mode)', () => {
    before(() => setTracingDisabled(true));

    const runner = () => new Runner({ modelProvider: new OpenAIProvider({ openAIClient: openai() }) });

    for (const kind of ['anthropic', 'openai', 'responses'] as const) {
      for (const stream of [false, true]) {
        it(`runs an agent's tool loop on ${kind}${stream ? ', streamed' : ''}: the model calls the tool, the agent runs it, the model answers`, async () => {
          const from = fakes[kind].requests.length;
          fakes[kind].script({ toolUse: { id: `call_agent_${kind}`, name: 'get_weather', input: { city: 'Hangzhou' } } }, { text: 'Hangzhou: 18°C with light rain.' });
          const asked: string[] = [];
          const agent = weatherAgent(MODEL[kind], asked);
          let finalOutput: unknown;
          if (stream) {
            const result = await runner().run(agent, 'What is the weather in Hangzhou?', { stream: true });
            await result.completed;
            finalOutput = result.finalOutput;
          } else {
            finalOutput = (await runner().run(agent, 'What is the weather in Hangzhou?')).finalOutput;
          }
          expect(finalOutput).to.equal('Hangzhou: 18°C with light rain.');
          expect(asked).to.deep.equal(['Hangzhou']);
          const received = fakes[kind].requests.slice(from);
          expect(received).to.have.length(2);
          expect(JSON.stringify(received[1]!.body)).to.contain('Hangzhou: 18°C, light rain');
          if (kind === 'anthropic') expect(received[0]!.body.system).to.contain('Answer weather questions with the tool.');
        });
      }
    }
  });

  describe('LangChain with useResponsesApi', () => {
    const chat = (model: string) => new ChatOpenAI({ apiKey: secret, configuration: { baseURL: `${t.baseUrl}/v1` }, model, useResponsesApi: true, maxRetries: 0 });

    it('streams an answer, with usage', async () => {
      fakes.anthropic.script({ text: 'Bonjour à tous.', usage: { input: 9, output: 4 } });
      let text = '';
      let usage: unknown;
      for await (const chunk of await chat(MODEL.anthropic).stream([new HumanMessage('Greet us in French.')])) {
        text += typeof chunk.content === 'string' ? chunk.content : chunk.content.map((c) => ('text' in c ? c.text : '')).join('');
        usage = chunk.usage_metadata ?? usage;
      }
      expect(text).to.equal('Bonjour à tous.');
      expect(usage).to.deep.include({ input_tokens: 9, output_tokens: 4, total_tokens: 13 });
      expect(fakes.anthropic.requests.at(-1)!.body.messages[0].content).to.deep.equal([{ type: 'text', text: 'Greet us in French.' }]);
    });

    it('binds a tool, gets the call, sends the result back', async () => {
      fakes.openai.script({ toolUse: { id: 'call_lc', name: 'get_weather', input: { city: 'Oslo' } } }, { text: 'Cold in Oslo.' });
      const model = chat(MODEL.openai).bindTools([WEATHER]);
      const first = await model.invoke([new HumanMessage('Weather in Oslo?')]);
      expect(first.tool_calls).to.deep.equal([{ id: 'call_lc', name: 'get_weather', args: { city: 'Oslo' }, type: 'tool_call' }]);
      const second = await model.invoke([new HumanMessage('Weather in Oslo?'), new AIMessage(first), new ToolMessage({ tool_call_id: 'call_lc', content: '-3°C' })]);
      expect(second.text).to.equal('Cold in Oslo.');
      expect(fakes.openai.requests.at(-1)!.body.messages.at(-1)).to.deep.equal({ role: 'tool', tool_call_id: 'call_lc', content: '-3°C' });
    });
  });
});
