import { expect } from 'chai';
import type { CanonicalEvent } from '../../../src/core/canonical';
import { thinkingBudget, toAnthropicRequest } from '../../../src/providers/anthropic/anthropic-request.mapper';
import { AnthropicStreamMapper, fromAnthropicMessage } from '../../../src/providers/anthropic/anthropic.mapper';
import { UpstreamError } from '../../../src/providers/provider';
import { canonicalRequest, fakeDeployment } from '../../support/fake-upstreams';
import { collect, fixture, parseChunks, textOf, twoWaySplits, utf8 } from './canonical-events';

function replay(chunks: Uint8Array[]): CanonicalEvent[] {
  const mapper = new AnthropicStreamMapper();
  const events = parseChunks(chunks).flatMap((event) => mapper.push(event.event, JSON.parse(event.data)));
  expect(mapper.done, 'message_stop seen').to.equal(true);
  return events;
}

function sse(events: Array<[string, unknown]>): Uint8Array {
  return utf8(events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
}

const START = {
  type: 'message_start',
  message: {
    id: 'msg_hand',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 1 },
  },
};

describe('Anthropic mapper', () => {
  describe('recorded streams', () => {
    it('maps the basic text stream to "Hello there!" with usage 11 in / 6 out', () => {
      const response = collect(replay([fixture('anthropic_basic_text_stream.sse')]));
      expect(textOf(response)).to.equal('Hello there!');
      expect(response.id).to.equal('msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK');
      expect(response.model).to.equal('claude-opus-4-8');
      expect(response.stopReason).to.equal('end_turn');
      expect(response.usage).to.deep.equal({ inputCacheHit: 0, inputCacheMiss: 11, output: 6 });
      // Only the fields each event carried: message_start has no cache fields.
      expect(response.usageEvents).to.deep.equal([{ inputCacheMiss: 11, output: 1 }, { output: 6 }]);
    });

    it('reassembles the tool_use input from its JSON fragments', () => {
      const response = collect(replay([fixture('anthropic_tool_use_stream.sse')]));
      expect(response.content).to.deep.equal([
        { type: 'text', text: "I'll check the current weather in Paris for you." },
        { type: 'tool_use', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', input: { location: 'Paris' } },
      ]);
      expect(response.stopReason).to.equal('tool_use');
      expect(response.usage).to.deep.equal({ inputCacheHit: 0, inputCacheMiss: 377, output: 65 });
    });

    it('overwrites cumulative usage repeated in message_delta instead of adding it', () => {
      const response = collect(replay([fixture('anthropic_message_delta_cumulative_usage.sse')]));
      expect(textOf(response)).to.equal('Hello there!');
      expect(response.usageEvents).to.deep.equal([
        { inputCacheHit: 5, inputCacheMiss: 35, output: 1, cacheWrite5m: 10, cacheWrite1h: 0 },
        { inputCacheHit: 7, inputCacheMiss: 52, output: 8, cacheWrite5m: 12, cacheWrite1h: 0 },
      ]);
      // 40 input + 12 cache creation; a summing consumer would say 87. The later total without a split is 5-minute writes.
      expect(response.usage).to.deep.equal({ inputCacheHit: 7, inputCacheMiss: 52, output: 8, cacheWrite5m: 12, cacheWrite1h: 0 });
    });

    for (const name of [
      'anthropic_basic_text_stream.sse',
      'anthropic_tool_use_stream.sse',
      'anthropic_message_delta_cumulative_usage.sse',
    ]) {
      it(`maps ${name} identically however the bytes are cut in two`, () => {
        const bytes = fixture(name);
        const whole = replay([bytes]);
        for (const [cut, chunks] of twoWaySplits(bytes)) expect(replay(chunks), `cut at ${cut}`).to.deep.equal(whole);
      });
    }
  });

  describe('hand-written streams', () => {
    it('maps a thinking block with its signature before the text', () => {
      const bytes = sse([
        ['message_start', START],
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me think' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: ' about 2+2.' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAh' } }],
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '4' } }],
        ['content_block_stop', { type: 'content_block_stop', index: 1 }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 30 } }],
        ['message_stop', { type: 'message_stop' }],
      ]);
      const events = replay([bytes]);
      const response = collect(events);
      expect(response.content).to.deep.equal([
        { type: 'thinking', thinking: 'Let me think about 2+2.', signature: 'EqQBCgIYAh' },
        { type: 'text', text: '4' },
      ]);
      // The 5 cache-creation tokens are 5-minute writes (no split reported: the default TTL).
      expect(response.usage).to.deep.equal({ inputCacheHit: 100, inputCacheMiss: 15, output: 30, cacheWrite5m: 5, cacheWrite1h: 0 });
      for (const [cut, chunks] of twoWaySplits(bytes)) expect(replay(chunks), `cut at ${cut}`).to.deep.equal(events);
    });

    it('keeps blocks, deltas and events without a canonical form, raw and in order, for the Messages form to relay', () => {
      const events = replay([
          sse([
            ['message_start', START],
            ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }],
            ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } }],
            ['content_block_stop', { type: 'content_block_stop', index: 0 }],
            ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'abc' } }],
            ['content_block_stop', { type: 'content_block_stop', index: 1 }],
            ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } }],
            ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Found it.' } }],
            ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'citations_delta', citation: {} } }],
            ['content_block_stop', { type: 'content_block_stop', index: 2 }],
            ['some_future_event', { type: 'some_future_event' }],
            ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }],
            ['message_stop', { type: 'message_stop' }],
          ]),
        ]);
      const response = collect(events);
      expect(response.content).to.deep.equal([
        { type: 'other', raw: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } },
        { type: 'other', raw: { type: 'redacted_thinking', data: 'abc' } },
        { type: 'text', text: 'Found it.' },
      ]);
      expect(events.filter((e) => e.type === 'raw_delta' || e.type === 'raw_event')).to.deep.equal([
        { type: 'raw_delta', index: 2, delta: { type: 'citations_delta', citation: {} } },
        { type: 'raw_event', event: 'some_future_event', data: { type: 'some_future_event' } },
      ]);
      expect(events.find((e) => e.type === 'tool_input_delta')).to.deep.equal({ type: 'tool_input_delta', index: 0, partialJson: '{"query":"x"}' });
    });

    it('keeps cache-creation tokens in the miss count when a later event repeats only input_tokens', () => {
      const mapper = new AnthropicStreamMapper();
      mapper.push('message_start', START);
      expect(
        mapper.push('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: 'max_tokens', stop_sequence: null },
          usage: { input_tokens: 12, output_tokens: 50 },
        }),
      ).to.deep.equal([{ type: 'usage', usage: { inputCacheMiss: 17, output: 50, cacheWrite5m: 5, cacheWrite1h: 0 } }]);
      expect(mapper.push('message_stop', { type: 'message_stop' })).to.deep.equal([
        { type: 'message_stop', stopReason: 'max_tokens', stopSequence: null, raw: { stopReason: 'max_tokens' } },
      ]);
    });

    it('reports cache writes by TTL: the cache_creation split where sent, else all of them as 5-minute writes', () => {
      const split = new AnthropicStreamMapper();
      const start = {
        ...START,
        message: {
          ...START.message,
          usage: {
            input_tokens: 10,
            cache_creation_input_tokens: 300,
            cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
            cache_read_input_tokens: 0,
            output_tokens: 1,
          },
        },
      };
      expect(split.push('message_start', start).at(-1)).to.deep.equal({
        type: 'usage',
        usage: { inputCacheHit: 0, inputCacheMiss: 310, output: 1, cacheWrite5m: 100, cacheWrite1h: 200 },
      });
      // message_delta repeating the totals without the split keeps the split it had.
      expect(
        split.push('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 10, cache_creation_input_tokens: 300, output_tokens: 9 } }),
      ).to.deep.equal([{ type: 'usage', usage: { inputCacheMiss: 310, output: 9, cacheWrite5m: 100, cacheWrite1h: 200 } }]);
      const unsplit = new AnthropicStreamMapper();
      expect(unsplit.push('message_start', START).at(-1)).to.deep.equal({
        type: 'usage',
        usage: { inputCacheHit: 100, inputCacheMiss: 15, output: 1, cacheWrite5m: 5, cacheWrite1h: 0 },
      });
    });

    it('passes the stop sequence that ended the message', () => {
      const mapper = new AnthropicStreamMapper();
      mapper.push('message_start', START);
      mapper.push('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' },
        usage: { output_tokens: 3 },
      });
      expect(mapper.push('message_stop', { type: 'message_stop' })).to.deep.equal([
        { type: 'message_stop', stopReason: 'stop_sequence', stopSequence: 'END', raw: { stopReason: 'stop_sequence' } },
      ]);
    });

    it('turns an error event into a protocol UpstreamError carrying the upstream type', () => {
      const mapper = new AnthropicStreamMapper();
      const parsed = parseChunks([
        sse([
          ['message_start', START],
          ['ping', { type: 'ping' }],
          ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
        ]),
      ]);
      const before = parsed.slice(0, 2).flatMap((event) => mapper.push(event.event, JSON.parse(event.data)));
      // The ping is relayed (it keeps the client's connection alive through long pauses).
      expect(before.map((event) => event.type)).to.deep.equal(['message_start', 'usage', 'raw_event']);
      const error = parsed[2];
      expect(() => mapper.push(error?.event, JSON.parse(error?.data ?? ''))).to.throw(UpstreamError).that.includes({
        failure: 'protocol',
        message: 'Overloaded',
        upstreamType: 'overloaded_error',
      });
    });

    it('refuses content before message_start', () => {
      const mapper = new AnthropicStreamMapper();
      expect(() =>
        mapper.push('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ).to.throw(UpstreamError, /before message_start/);
    });
  });

  describe('plain replies', () => {
    it('maps every block of a message, then usage and the stop reason', () => {
      const events = fromAnthropicMessage({
        id: 'msg_plain',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [
          { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
          { type: 'text', text: 'Calling the tool.' },
          { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'a' } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 3, cache_creation_input_tokens: 4, cache_read_input_tokens: 5, output_tokens: 6 },
      });
      expect(events.at(-2)).to.deep.equal({ type: 'usage', usage: { inputCacheHit: 5, inputCacheMiss: 7, output: 6, cacheWrite5m: 4, cacheWrite1h: 0 } });
      const response = collect(events);
      expect(response.content).to.deep.equal([
        { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
        { type: 'text', text: 'Calling the tool.' },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'a' } },
      ]);
      expect(response.stopReason).to.equal('tool_use');
    });

    it('refuses a body that is not a message', () => {
      expect(() => fromAnthropicMessage({ hello: 'world' })).to.throw(UpstreamError, /not an Anthropic message/);
    });
  });

  describe('requests', () => {
    const deployment = fakeDeployment('anthropic', { model: 'claude-x-2026' });

    it('sends the upstream model, system, sampling parameters and the stream flag', () => {
      const body = toAnthropicRequest(
        canonicalRequest({
          model: 'tsxt-general',
          system: 'Be brief.',
          maxTokens: 100,
          stream: true,
          temperature: 0.2,
          topP: 0.9,
          topK: 40,
          stopSequences: ['END'],
          userId: 'user-7',
        }),
        deployment,
      );
      expect(body).to.deep.equal({
        model: 'claude-x-2026',
        max_tokens: 100,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }],
        stream: true,
        system: 'Be brief.',
        stop_sequences: ['END'],
        metadata: { user_id: 'user-7' },
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
      });
    });

    it('maps every content block type', () => {
      const body = toAnthropicRequest(
        canonicalRequest({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in this picture?' },
                { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
              ],
            },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'signed', signature: 'sig-1' },
                { type: 'thinking', thinking: 'from another upstream' },
                { type: 'tool_use', id: 'toolu_1', name: 'describe', input: { detail: 'high' } },
              ],
            },
            { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: [{ type: 'text', text: 'a cat' }], isError: false }] },
            { role: 'assistant', content: [{ type: 'thinking', thinking: 'unsigned only' }] },
          ],
        }),
        deployment,
      );
      expect(body.messages).to.deep.equal([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'signed', signature: 'sig-1' },
            { type: 'tool_use', id: 'toolu_1', name: 'describe', input: { detail: 'high' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'a cat' }], is_error: false }] },
      ]);
    });

    it('maps tools and every tool choice', () => {
      const tools = [{ name: 'lookup', description: 'Find things', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }];
      const cases = [
        [{ type: 'auto' }, { type: 'auto' }],
        [{ type: 'any' }, { type: 'any' }],
        [{ type: 'none' }, { type: 'none' }],
        [{ type: 'tool', name: 'lookup' }, { type: 'tool', name: 'lookup' }],
      ] as const;
      for (const [choice, wire] of cases) {
        const body = toAnthropicRequest(canonicalRequest({ tools, toolChoice: choice }), deployment);
        expect(body.tool_choice).to.deep.equal(wire);
        expect(body.tools).to.deep.equal([
          { name: 'lookup', description: 'Find things', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
        ]);
      }
    });

    describe('extended thinking', () => {
      const thinking = fakeDeployment('anthropic', { thinking: true });
      const cases: Array<[string, number, number | undefined, number, number]> = [
        ['half of max_tokens by default', 4096, undefined, 2048, 4096],
        ['at least the 1024 minimum', 1500, undefined, 1024, 1500],
        ['the minimum even when max_tokens is below it, raising max_tokens', 500, undefined, 1024, 1524],
        ['the caller budget when given', 16000, 8000, 8000, 16000],
        ['the caller budget, raising max_tokens above it', 1000, 8000, 8000, 9000],
      ];
      for (const [what, maxTokens, budget, expectedBudget, expectedMax] of cases) {
        it(`budgets ${what}`, () => {
          const request = canonicalRequest({ maxTokens, ...(budget !== undefined ? { thinking: { type: 'enabled' as const, budgetTokens: budget } } : {}) });
          const body = toAnthropicRequest(request, thinking);
          expect(body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: expectedBudget });
          expect(body.max_tokens).to.equal(expectedMax);
          expect(body.max_tokens).to.be.greaterThan(expectedBudget);
          expect(thinkingBudget(request)).to.deep.equal({ budgetTokens: expectedBudget, maxTokens: expectedMax });
        });
      }

      it('drops the sampling parameters Anthropic refuses with thinking', () => {
        const body = toAnthropicRequest(canonicalRequest({ temperature: 0.3, topK: 5, topP: 0.5 }), thinking);
        expect(body).to.not.have.any.keys('temperature', 'top_k', 'top_p');
        expect(toAnthropicRequest(canonicalRequest({ topP: 0.97 }), thinking).top_p).to.equal(0.97);
      });

      it("forwards the caller's thinking to any deployment, and adds none when neither the caller nor the deployment asks", () => {
        const body = toAnthropicRequest(canonicalRequest({ thinking: { type: 'enabled', budgetTokens: 2000 } }), deployment);
        expect(body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 2000 });
        expect(toAnthropicRequest(canonicalRequest(), deployment)).to.not.have.property('thinking');
      });

      it('never forces thinking on a caller that disabled it', () => {
        expect(toAnthropicRequest(canonicalRequest({ thinking: { type: 'disabled' } }), thinking)).to.not.have.property('thinking');
      });
    });
  });
});
