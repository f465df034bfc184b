import { expect } from 'chai';
import type { CanonicalEvent } from '../../../src/core/canonical';
import { toOpenAiRequest } from '../../../src/providers/openai/openai-request.mapper';
import { fromOpenAiCompletion, OpenAiStreamMapper, toStopReason } from '../../../src/providers/openai/openai.mapper';
import { UpstreamError } from '../../../src/providers/provider';
import { canonicalRequest, fakeDeployment } from '../../support/fake-upstreams';
import { collect, fixture, parseChunks, textOf, twoWaySplits, utf8 } from './canonical-events';

function replay(chunks: Uint8Array[]): CanonicalEvent[] {
  const mapper = new OpenAiStreamMapper();
  const events = parseChunks(chunks).flatMap((event) =>
    event.data === '[DONE]' ? mapper.finish() : mapper.push(JSON.parse(event.data)),
  );
  expect(mapper.done, '[DONE] seen').to.equal(true);
  return events;
}

const BASE = { id: 'chatcmpl-hand', object: 'chat.completion.chunk', created: 1, model: 'deepseek-reasoner' };

function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { ...BASE, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
}

function stream(chunks: unknown[]): Uint8Array {
  return utf8(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n');
}

describe('OpenAI mapper', () => {
  describe('recorded streams', () => {
    it('maps the text stream, with message_stop after the final usage chunk', () => {
      const events = replay([fixture('openai_chat_stream_text_with_usage.sse')]);
      expect(events.filter((e) => e.type !== 'raw_delta')).to.deep.equal([
        { type: 'message_start', id: 'chatcmpl-ABfw5EzoqmfXjnnsXY7Yd8OC6tb3c', model: 'gpt-4o-2024-08-06', raw: { system_fingerprint: 'fp_5050236cbd' } },
        { type: 'block_start', index: 0, block: { type: 'text' } },
        { type: 'text_delta', index: 0, text: 'Foo' },
        { type: 'text_delta', index: 0, text: '!' },
        { type: 'block_stop', index: 0 },
        { type: 'usage', usage: { inputCacheHit: 0, inputCacheMiss: 9, output: 2 }, extra: { completion_tokens_details: { reasoning_tokens: 0 } } },
        { type: 'message_stop', stopReason: 'end_turn', raw: { stopReason: 'stop' } },
      ]);
    });

    it("keeps each chunk's fields beyond the canonical ones (logprobs), in order, for relay to chat clients", () => {
      const events = replay([fixture('openai_chat_stream_text_with_usage.sse')]);
      const logprobs = events.flatMap((e) => (e.type === 'raw_delta' ? [e.choice?.logprobs] : []));
      expect(logprobs.length).to.be.greaterThan(0);
      expect(JSON.stringify(logprobs)).to.contain('"token":"Foo"');
    });

    it('assembles the streamed tool call from its argument fragments', () => {
      const response = collect(replay([fixture('openai_chat_stream_tool_call_with_usage.sse')]));
      expect(response.content).to.deep.equal([
        {
          type: 'tool_use',
          id: 'call_CTf1nWJLqSeRgDqaCG27xZ74',
          name: 'get_weather',
          input: { city: 'San Francisco', state: 'CA' },
        },
      ]);
      expect(response.stopReason).to.equal('tool_use');
      expect(response.usage).to.deep.equal({ inputCacheHit: 0, inputCacheMiss: 48, output: 19 });
    });

    for (const name of ['openai_chat_stream_text_with_usage.sse', 'openai_chat_stream_tool_call_with_usage.sse']) {
      it(`maps ${name} identically however the bytes are cut in two`, () => {
        const bytes = fixture(name);
        const whole = replay([bytes]);
        for (const [cut, chunks] of twoWaySplits(bytes)) expect(replay(chunks), `cut at ${cut}`).to.deep.equal(whole);
      });
    }
  });

  describe('hand-written streams', () => {
    it('maps DeepSeek reasoning_content to a thinking block closed before the text', () => {
      const bytes = stream([
        chunk({ role: 'assistant', content: null, reasoning_content: '' }),
        chunk({ reasoning_content: 'Two plus two' }),
        chunk({ reasoning_content: ' is four.' }),
        chunk({ content: 'It is ' }),
        chunk({ content: '4.' }),
        chunk({}, 'stop'),
        {
          ...BASE,
          choices: [],
          usage: {
            prompt_tokens: 100,
            completion_tokens: 20,
            total_tokens: 120,
            prompt_tokens_details: { cached_tokens: 64 },
            prompt_cache_hit_tokens: 64,
            prompt_cache_miss_tokens: 36,
          },
        },
      ]);
      const events = replay([bytes]);
      const response = collect(events);
      expect(response.content).to.deep.equal([
        { type: 'thinking', thinking: 'Two plus two is four.' },
        { type: 'text', text: 'It is 4.' },
      ]);
      expect(response.usage).to.deep.equal({ inputCacheHit: 64, inputCacheMiss: 36, output: 20 });
      expect(events.slice(-2).map((event) => event.type)).to.deep.equal(['usage', 'message_stop']);
      for (const [cut, chunks] of twoWaySplits(bytes)) expect(replay(chunks), `cut at ${cut}`).to.deep.equal(events);
    });

    it('reads DeepSeek cache counters when prompt_tokens_details is absent', () => {
      const response = collect(
        replay([
          stream([
            chunk({ role: 'assistant', content: 'Hi' }, 'stop'),
            { ...BASE, choices: [], usage: { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51, prompt_cache_hit_tokens: 32 } },
          ]),
        ]),
      );
      expect(response.usage).to.deep.equal({ inputCacheHit: 32, inputCacheMiss: 18, output: 1 });
    });

    it('opens one tool_use block per parallel call, after the text', () => {
      const response = collect(
        replay([
          stream([
            chunk({ role: 'assistant', content: 'Checking both.' }),
            chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
            chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] }),
            chunk({}, 'tool_calls'),
          ]),
        ]),
      );
      expect(response.content).to.deep.equal([
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_use', id: 'call_a', name: 'weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_b', name: 'weather', input: { city: 'Rome' } },
      ]);
      expect(response.stopReason).to.equal('tool_use');
    });

    it('gives a tool call without an id a stable one', () => {
      const response = collect(
        replay([stream([chunk({ role: 'assistant', tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }), chunk({}, 'tool_calls')])]),
      );
      expect(response.content[0]).to.include({ type: 'tool_use', id: 'call_chatcmpl-hand_0', name: 'f' });
    });

    it('refuses tool call fragments that interleave', () => {
      const mapper = new OpenAiStreamMapper();
      mapper.push(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{' } }] }));
      mapper.push(chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{' } }] }));
      expect(() => mapper.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }))).to.throw(
        UpstreamError,
        /interleaved/,
      );
    });

    it('starts the message even when the first chunk carries no role', () => {
      const response = collect(replay([stream([chunk({ content: 'Hi' }), chunk({}, 'length')])]));
      expect(textOf(response)).to.equal('Hi');
      expect(response.stopReason).to.equal('max_tokens');
    });

    it('turns an error chunk into a protocol UpstreamError', () => {
      const mapper = new OpenAiStreamMapper();
      mapper.push(chunk({ role: 'assistant', content: 'partial' }));
      expect(() => mapper.push({ error: { message: 'Internal error', type: 'server_error', code: null } }))
        .to.throw(UpstreamError)
        .that.includes({ failure: 'protocol', message: 'Internal error', upstreamType: 'server_error' });
    });

    it('maps every finish reason', () => {
      const cases = [
        ['stop', 'end_turn'],
        ['length', 'max_tokens'],
        ['tool_calls', 'tool_use'],
        ['function_call', 'tool_use'],
        ['content_filter', 'refusal'],
        [null, 'end_turn'],
      ] as const;
      for (const [finish, stop] of cases) expect(toStopReason(finish), String(finish)).to.equal(stop);
    });
  });

  describe('plain replies', () => {
    it('maps reasoning, text, tool calls and usage of a completion', () => {
      const response = collect(
        fromOpenAiCompletion({
          id: 'chatcmpl-plain',
          object: 'chat.completion',
          created: 1,
          model: 'qwen-large',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: 'Looking it up.',
                refusal: null,
                reasoning_content: 'Need the tool.',
                tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
              },
              logprobs: null,
              finish_reason: 'tool_calls',
            },
          ],
          usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27, prompt_tokens_details: { cached_tokens: 16 } },
        }),
      );
      expect(response).to.deep.include({
        id: 'chatcmpl-plain',
        model: 'qwen-large',
        content: [
          { type: 'thinking', thinking: 'Need the tool.' },
          { type: 'text', text: 'Looking it up.' },
          { type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'x' } },
        ],
        stopReason: 'tool_use',
        usage: { inputCacheHit: 16, inputCacheMiss: 4, output: 7 },
      });
    });

    it('maps a refusal to refusal text and stop reason', () => {
      const response = collect(
        fromOpenAiCompletion({
          id: 'c',
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'I cannot help.' }, finish_reason: 'stop' }],
        }),
      );
      expect(textOf(response)).to.equal('I cannot help.');
      expect(response.stopReason).to.equal('refusal');
    });

    it('refuses a body that is not a completion', () => {
      expect(() => fromOpenAiCompletion({ object: 'list' })).to.throw(UpstreamError, /not a chat completion/);
    });
  });

  describe('requests', () => {
    const deployment = fakeDeployment('openai', { model: 'qwen-large' });

    it('puts the system prompt first and sends the upstream model and limits', () => {
      const body = toOpenAiRequest(
        canonicalRequest({ system: 'Be brief.', maxTokens: 64, temperature: 0.5, topP: 0.8, topK: 10, stopSequences: ['END'], userId: 'u1' }),
        deployment,
      );
      expect(body).to.deep.equal({
        model: 'qwen-large',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello.' },
        ],
        max_tokens: 64,
        stream: false,
        temperature: 0.5,
        top_p: 0.8,
        stop: ['END'],
        user: 'u1',
      });
    });

    it('asks for usage in streams', () => {
      const body = toOpenAiRequest(canonicalRequest({ stream: true }), deployment);
      expect(body).to.include({ stream: true });
      expect(body.stream_options).to.deep.equal({ include_usage: true });
    });

    it('asks for high reasoning effort on thinking deployments, without sampling parameters', () => {
      const body = toOpenAiRequest(canonicalRequest({ temperature: 0.5 }), fakeDeployment('openai', { thinking: true }));
      expect(body.reasoning_effort).to.equal('high');
      expect(body).to.not.have.property('temperature');
    });

    it('maps tool calls, tool results and images to their chat message forms', () => {
      const body = toOpenAiRequest(
        canonicalRequest({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Weather here?' },
                { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' } },
              ],
            },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'use the tool', signature: 's' },
                { type: 'text', text: 'Let me check.' },
                { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
              ],
            },
            {
              role: 'user',
              content: [
                { type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'text', text: 'sunny' }] },
                { type: 'text', text: 'And tomorrow?' },
              ],
            },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'call_2', name: 'weather', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_2', content: [{ type: 'text', text: 'rain' }], isError: false }] },
          ],
        }),
        deployment,
      );
      expect(body.messages).to.deep.equal([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'user', content: 'And tomorrow?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_2', content: 'rain' },
      ]);
    });

    it('maps tools and every tool choice', () => {
      const tools = [{ name: 'lookup', description: 'Find', inputSchema: { type: 'object', properties: {} } }];
      const cases = [
        [{ type: 'auto' }, 'auto'],
        [{ type: 'any' }, 'required'],
        [{ type: 'none' }, 'none'],
        [{ type: 'tool', name: 'lookup' }, { type: 'function', function: { name: 'lookup' } }],
      ] as const;
      for (const [choice, wire] of cases) {
        const body = toOpenAiRequest(canonicalRequest({ tools, toolChoice: choice }), deployment);
        expect(body.tool_choice).to.deep.equal(wire);
        expect(body.tools).to.deep.equal([
          { type: 'function', function: { name: 'lookup', description: 'Find', parameters: { type: 'object', properties: {} } } },
        ]);
      }
    });
  });
});
