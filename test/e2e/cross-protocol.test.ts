// Across protocols (docs/architecture.md §4): a Messages client on an OpenAI upstream and a
// chat client on an Anthropic upstream, through the official SDKs and
// LangChain. Everything with a counterpart is translated both ways; what has
// none and changes nothing the caller relies on is dropped and listed in
// `x-gateway-dropped`; the rest is refused with a 400 naming the field and
// the deployment's protocol.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { expect } from 'chai';
import type { TestAccount, TestApp } from '../support/app';
import type { FakeUpstream } from '../support/fake-upstreams';
import { OPENAI_UNIFY, startKeyedGateway, usageDetail, type KeyedGateway, type UpstreamKind } from './e2e-support';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('e2e: across protocols', function () {
  this.timeout(30_000);
  let gateway: KeyedGateway;
  let t: TestApp;
  let fakes: Record<UpstreamKind, FakeUpstream>;
  let owner: TestAccount;
  let secret: string;
  let keyId: string;

  before(async () => {
    gateway = await startKeyedGateway();
    ({ t, fakes, owner, secret, keyId } = gateway);
  });

  after(async () => {
    await gateway?.close();
  });

  const anthropic = () => new Anthropic({ apiKey: secret, baseURL: t.baseUrl, maxRetries: 0 });
  const openai = () => new OpenAI({ apiKey: secret, baseURL: `${t.baseUrl}/v1`, maxRetries: 0 });
  const lastBody = (kind: UpstreamKind) => fakes[kind].requests.at(-1)!.body;

  describe('Messages client → OpenAI upstream', () => {
    it('translates system blocks, images, stop sequences, structured output and tools; drops cache_control and lists it', async () => {
      fakes.openai.script({ toolUse: { id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }, stopReason: 'tool_calls' });
      const { data: message, response } = await anthropic()
        .messages.create({
          model: 'm-openai',
          max_tokens: 300,
          system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
          stop_sequences: ['END'],
          tools: [WEATHER_TOOL],
          tool_choice: { type: 'auto' },
          output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { ok: { type: 'boolean' } } } } },
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in this picture, and the weather in Paris?' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
                { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
              ],
            },
          ],
        } as Anthropic.MessageCreateParamsNonStreaming)
        .withResponse();

      const sent = lastBody('openai');
      expect(sent.model).to.equal('gpt-fake');
      expect(sent.max_tokens).to.equal(300);
      expect(sent.stop).to.deep.equal(['END']);
      expect(sent.messages[0]).to.deep.equal({ role: 'system', content: 'Be brief.' });
      expect(sent.messages[1].content).to.deep.equal([
        { type: 'text', text: 'What is in this picture, and the weather in Paris?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      ]);
      expect(sent.tools).to.deep.equal([
        { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: WEATHER_TOOL.input_schema } },
      ]);
      expect(sent.tool_choice).to.equal('auto');
      expect(sent.response_format).to.deep.include({ type: 'json_schema' });
      expect(sent.response_format.json_schema.schema).to.deep.equal({ type: 'object', properties: { ok: { type: 'boolean' } } });
      expect(JSON.stringify(sent)).to.not.contain('cache_control');
      expect(response.headers.get('x-gateway-dropped')).to.contain('cache_control');

      expect(message.stop_reason).to.equal('tool_use');
      const toolUse = message.content.find((b) => b.type === 'tool_use');
      expect(toolUse).to.deep.include({ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } });
    });

    it('sends the tool result back as a tool message after the assistant’s tool call', async () => {
      fakes.openai.script({ text: 'Sunny, 21 °C.' });
      const message = await anthropic().messages.create({
        model: 'm-openai',
        max_tokens: 200,
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny, 21' }] },
        ],
      });
      const sent = lastBody('openai');
      expect(sent.messages[1]).to.deep.include({ role: 'assistant' });
      expect(sent.messages[1].tool_calls).to.deep.equal([{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
      expect(sent.messages[2]).to.deep.include({ role: 'tool', tool_call_id: 'call_1' });
      expect(JSON.stringify(sent.messages[2].content)).to.contain('sunny, 21');
      expect(message.content[0]).to.deep.include({ type: 'text', text: 'Sunny, 21 °C.' });
    });

    it('turns thinking into a reasoning effort, and reads cached tokens into the usage, streamed too', async () => {
      fakes.openai.script({ text: 'Done.', usage: { input: 100, cacheRead: 40, output: 10 } });
      const stream = anthropic().messages.stream({
        model: 'm-openai',
        max_tokens: 16_000,
        thinking: { type: 'enabled', budget_tokens: 10_000 },
        messages: [{ role: 'user', content: 'Plan the migration.' }],
      });
      let deltaUsage: Record<string, unknown> = {};
      stream.on('streamEvent', (event) => {
        if (event.type === 'message_delta') deltaUsage = event.usage as unknown as Record<string, unknown>;
      });
      const final = await stream.finalMessage();
      const sent = lastBody('openai');
      expect(sent.reasoning_effort).to.equal('high');
      expect(sent.max_completion_tokens).to.equal(16_000);
      expect(sent.stream_options).to.deep.equal({ include_usage: true });
      // The OpenAI upstream counts at the end, so the counts come in message_delta.
      expect(final.usage.input_tokens).to.equal(Math.ceil(40 * OPENAI_UNIFY.input) + Math.ceil(60 * OPENAI_UNIFY.input));
      expect(deltaUsage.cached_input_tokens).to.equal(Math.ceil(40 * OPENAI_UNIFY.input));
      expect(final.usage.cache_read_input_tokens ?? null, 'nothing a client adds on top of input_tokens').to.equal(null);
    });

    it('refuses what it cannot drop, naming the field and the protocol: a server tool, an uploaded file, MCP servers', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0.type'],
        [{ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] }, 'messages.0.content.0.source'],
        [{ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] }, 'mcp_servers'],
      ];
      const before = fakes.openai.requests.length;
      for (const [extra, field] of cases) {
        const response = await fetch(`${t.baseUrl}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': secret, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ model: 'm-openai', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...extra }),
        });
        const body = await response.json();
        expect(response.status, field).to.equal(400);
        expect(body.error.message).to.contain(field).and.to.contain('openai');
      }
      expect(fakes.openai.requests.length, 'a refused call reaches no upstream').to.equal(before);
    });
  });

  describe('chat client → Anthropic upstream', () => {
    it('translates system and developer messages in place, images, stop, max_completion_tokens, response_format and tools', async () => {
      fakes.anthropic.script({ toolUse: { id: 'toolu_9', name: 'get_weather', input: { city: 'Oslo' } }, stopReason: 'tool_use' });
      const { data: completion, response } = await openai()
        .chat.completions.create({
          model: 'm-anthropic',
          max_completion_tokens: 250,
          stop: ['END'],
          seed: 7,
          response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { city: { type: 'string' } } } } },
          tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: WEATHER_TOOL.input_schema } }],
          tool_choice: 'required',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: [{ type: 'text', text: 'Look:' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
            { role: 'assistant', content: 'A cat.' },
            { role: 'developer', content: 'Answer in English.' },
            { role: 'user', content: 'Weather in Oslo?' },
          ],
        })
        .withResponse();

      const sent = lastBody('anthropic');
      expect(sent.model).to.equal('claude-fake');
      expect(sent.max_tokens).to.equal(250);
      expect(sent.stop_sequences).to.deep.equal(['END']);
      expect(sent.system).to.equal('Be brief.');
      expect(sent.messages[0].content).to.deep.equal([
        { type: 'text', text: 'Look:' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      ]);
      expect(sent.messages[2]).to.deep.equal({ role: 'system', content: [{ type: 'text', text: 'Answer in English.' }] });
      expect(sent.tools).to.deep.equal([{ name: 'get_weather', description: 'Weather for a city', input_schema: WEATHER_TOOL.input_schema }]);
      expect(sent.tool_choice).to.deep.equal({ type: 'any' });
      expect(sent.output_config).to.deep.equal({ format: { type: 'json_schema', schema: { type: 'object', properties: { city: { type: 'string' } } } } });
      expect(response.headers.get('x-gateway-dropped')).to.contain('seed');

      expect(completion.choices[0]!.finish_reason).to.equal('tool_calls');
      expect(completion.choices[0]!.message.tool_calls![0]).to.deep.include({ id: 'toolu_9', type: 'function' });
      expect(JSON.parse((completion.choices[0]!.message.tool_calls![0] as { function: { arguments: string } }).function.arguments)).to.deep.equal({ city: 'Oslo' });
    });

    it('turns a reasoning effort into thinking, and reports cache reads as cached prompt tokens, streamed', async () => {
      fakes.anthropic.script({ thinking: 'Hmm.', text: 'Done.', usage: { input: 30, cacheRead: 70, output: 12 } });
      const stream = await openai().chat.completions.create({
        model: 'm-anthropic',
        max_completion_tokens: 8000,
        reasoning_effort: 'medium',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Plan the migration.' }],
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      const sent = lastBody('anthropic');
      expect(sent.thinking).to.deep.include({ type: 'enabled' });
      expect(sent.thinking.budget_tokens).to.be.within(1024, 8000);
      expect(text).to.equal('Done.');
      expect(usage!.prompt_tokens).to.equal(100);
      expect(usage!.prompt_tokens_details?.cached_tokens).to.equal(70);
      expect(usage!.completion_tokens).to.equal(12);
      const record = (await usageDetail(t, owner.token, keyId)).items[0]!;
      expect(record.thinking).to.equal(true);
    });

    it('refuses what the Messages API cannot give, naming the field and the protocol', async () => {
      for (const [extra, field] of [
        [{ logprobs: true }, 'logprobs'],
        [{ audio: { voice: 'alloy', format: 'wav' }, modalities: ['text', 'audio'] }, 'audio'],
        [{ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } }, 'tool_choice'],
      ] as const) {
        const error = await openai()
          .chat.completions.create({ model: 'm-anthropic', messages: [{ role: 'user', content: 'hi' }], ...(extra as object) } as OpenAI.ChatCompletionCreateParamsNonStreaming)
          .then(() => undefined, (e: unknown) => e);
        expect(error, field).to.be.instanceOf(OpenAI.BadRequestError);
        expect((error as Error).message).to.contain(field).and.to.contain('anthropic');
      }
    });
  });

  describe('LangChain', () => {
    it('ChatAnthropic on an OpenAI upstream, with a system message in the middle of the list and a tool round', async () => {
      fakes.openai.script({ text: 'It is sunny in Paris.' });
      const model = new ChatAnthropic({ apiKey: secret, anthropicApiUrl: t.baseUrl, model: 'm-openai', maxTokens: 200, maxRetries: 0 });
      const reply = await model.invoke([
        new SystemMessage('You are terse.'),
        new HumanMessage('Weather in Paris?'),
        new AIMessage({ content: '', tool_calls: [{ id: 'call_7', name: 'get_weather', args: { city: 'Paris' } }] }),
        new ToolMessage({ tool_call_id: 'call_7', content: 'sunny' }),
        new SystemMessage('Now answer in one sentence.'),
      ]);
      expect(reply.content).to.equal('It is sunny in Paris.');
      const roles = lastBody('openai').messages.map((m: { role: string }) => m.role);
      expect(roles).to.deep.equal(['system', 'user', 'assistant', 'tool', 'system']);
    });

    it('ChatOpenAI on an Anthropic upstream, with a system message in the middle, streamed', async () => {
      fakes.anthropic.script({ chunks: ['Bonjour', ' à tous.'] });
      const model = new ChatOpenAI({ apiKey: secret, configuration: { baseURL: `${t.baseUrl}/v1` }, model: 'm-anthropic', maxRetries: 0 });
      let text = '';
      for await (const chunk of await model.stream([new SystemMessage('Be polite.'), new HumanMessage('Greet us.'), new SystemMessage('In French.')])) {
        text += typeof chunk.content === 'string' ? chunk.content : '';
      }
      expect(text).to.equal('Bonjour à tous.');
      const sent = lastBody('anthropic');
      expect(sent.system).to.equal('Be polite.');
      expect(sent.messages.at(-1)).to.deep.equal({ role: 'system', content: [{ type: 'text', text: 'In French.' }] });
    });

    it('withStructuredOutput (json schema) from ChatOpenAI reaches an Anthropic upstream as output_config.format', async () => {
      fakes.anthropic.script({ text: '{"city":"Lyon","temperature":18}' });
      const model = new ChatOpenAI({ apiKey: secret, configuration: { baseURL: `${t.baseUrl}/v1` }, model: 'm-anthropic', maxRetries: 0 });
      const schema = {
        title: 'weather',
        type: 'object',
        properties: { city: { type: 'string' }, temperature: { type: 'number' } },
        required: ['city', 'temperature'],
        additionalProperties: false,
      };
      const result = await model.withStructuredOutput(schema, { method: 'jsonSchema' }).invoke('Weather in Lyon?');
      expect(result).to.deep.equal({ city: 'Lyon', temperature: 18 });
      expect(lastBody('anthropic').output_config.format).to.deep.include({ type: 'json_schema' });
      expect(lastBody('anthropic').output_config.format.schema.properties).to.have.keys('city', 'temperature');
    });

    it('ChatAnthropic same protocol keeps cache_control on the system prompt', async () => {
      fakes.anthropic.script({ text: 'ok' });
      const model = new ChatAnthropic({ apiKey: secret, anthropicApiUrl: t.baseUrl, model: 'm-anthropic', maxTokens: 50, maxRetries: 0 });
      await model.invoke([
        new SystemMessage({ content: [{ type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral' } }] }),
        new HumanMessage('hi'),
      ]);
      expect(lastBody('anthropic').system).to.deep.equal([{ type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral' } }]);
    });
  });
});
