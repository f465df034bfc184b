// The Responses API reply side: a stream in the shape OpenAI documents and
// sends (reasoning with two summary parts and encrypted content, a message, a
// function call, usage with cached and reasoning tokens), replayed through the
// SSE parser cut at every byte, and through the Responses encoder in relay
// mode, which must give the client the upstream's own events back.
import { expect } from 'chai';
import type { CanonicalEvent } from '../../../src/core/canonical';
import { ResponsesEncoder } from '../../../src/data-plane/responses/responses.encoder';
import type { ResponseUsage } from '../../../src/metering/tiers';
import { UpstreamError } from '../../../src/providers/provider';
import { fromResponsesJson, ResponsesStreamMapper } from '../../../src/providers/openai/responses.mapper';
import { parseSse } from '../../support/sse-client';
import { collect, parseChunks, twoWaySplits, utf8 } from './canonical-events';

const REASONING = { id: 'rs_68a1', type: 'reasoning', summary: [] };
const SUMMARY = [
  { type: 'summary_text', text: '**Checking the city**\n\nThe user wants Paris — 巴黎.' },
  { type: 'summary_text', text: '**Calling the tool**' },
];
const MESSAGE = { id: 'msg_68a2', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
const OUTPUT_TEXT = { type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] };
const CALL = { id: 'fc_68a3', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_Xy12', name: 'get_weather' };
const RESPONSE = {
  id: 'resp_68a0',
  object: 'response',
  created_at: 1_755_000_000,
  status: 'in_progress',
  background: false,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: 'gpt-5-2025-08-07',
  output: [],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: 'medium', summary: 'detailed' },
  service_tier: 'auto',
  store: false,
  temperature: 1,
  text: { format: { type: 'text' }, verbosity: 'medium' },
  tool_choice: 'auto',
  tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }],
  top_p: 1,
  truncation: 'disabled',
  usage: null,
  metadata: {},
};
const DONE_ITEMS = [
  { ...REASONING, summary: SUMMARY, encrypted_content: 'gAAAAABo-enc' },
  { ...MESSAGE, status: 'completed', content: [OUTPUT_TEXT] },
  { ...CALL, status: 'completed', arguments: '{"city":"Paris"}' },
];
const USAGE = { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 180, output_tokens_details: { reasoning_tokens: 128 }, total_tokens: 1380 };

/** The upstream's events, without sequence numbers (added on the wire). */
const EVENTS: Array<Record<string, unknown>> = [
  { type: 'response.created', response: RESPONSE },
  { type: 'response.in_progress', response: RESPONSE },
  { type: 'response.output_item.added', output_index: 0, item: REASONING },
  { type: 'response.reasoning_summary_part.added', item_id: 'rs_68a1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } },
  { type: 'response.reasoning_summary_text.delta', item_id: 'rs_68a1', output_index: 0, summary_index: 0, delta: '**Checking the city**\n\n' },
  { type: 'response.reasoning_summary_text.delta', item_id: 'rs_68a1', output_index: 0, summary_index: 0, delta: 'The user wants Paris — 巴黎.' },
  { type: 'response.reasoning_summary_text.done', item_id: 'rs_68a1', output_index: 0, summary_index: 0, text: SUMMARY[0]!.text },
  { type: 'response.reasoning_summary_part.done', item_id: 'rs_68a1', output_index: 0, summary_index: 0, part: SUMMARY[0] },
  { type: 'response.reasoning_summary_part.added', item_id: 'rs_68a1', output_index: 0, summary_index: 1, part: { type: 'summary_text', text: '' } },
  { type: 'response.reasoning_summary_text.delta', item_id: 'rs_68a1', output_index: 0, summary_index: 1, delta: '**Calling the tool**' },
  { type: 'response.reasoning_summary_text.done', item_id: 'rs_68a1', output_index: 0, summary_index: 1, text: SUMMARY[1]!.text },
  { type: 'response.reasoning_summary_part.done', item_id: 'rs_68a1', output_index: 0, summary_index: 1, part: SUMMARY[1] },
  { type: 'response.output_item.done', output_index: 0, item: DONE_ITEMS[0] },
  { type: 'response.output_item.added', output_index: 1, item: MESSAGE },
  { type: 'response.content_part.added', item_id: 'msg_68a2', output_index: 1, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
  { type: 'response.output_text.delta', item_id: 'msg_68a2', output_index: 1, content_index: 0, delta: 'Let me', logprobs: [] },
  { type: 'response.output_text.delta', item_id: 'msg_68a2', output_index: 1, content_index: 0, delta: ' check.', logprobs: [] },
  { type: 'response.output_text.done', item_id: 'msg_68a2', output_index: 1, content_index: 0, text: 'Let me check.', logprobs: [] },
  { type: 'response.content_part.done', item_id: 'msg_68a2', output_index: 1, content_index: 0, part: OUTPUT_TEXT },
  { type: 'response.output_item.done', output_index: 1, item: DONE_ITEMS[1] },
  { type: 'response.output_item.added', output_index: 2, item: CALL },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_68a3', output_index: 2, delta: '{"city":' },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_68a3', output_index: 2, delta: '"Paris"}' },
  { type: 'response.function_call_arguments.done', item_id: 'fc_68a3', output_index: 2, name: 'get_weather', arguments: '{"city":"Paris"}' },
  { type: 'response.output_item.done', output_index: 2, item: DONE_ITEMS[2] },
  { type: 'response.completed', response: { ...RESPONSE, status: 'completed', output: DONE_ITEMS, usage: USAGE } },
];

const wire = (events: Array<Record<string, unknown>>): string =>
  events.map((e, i) => `event: ${String(e.type)}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`).join('');

function replay(chunks: Uint8Array[]): CanonicalEvent[] {
  const mapper = new ResponsesStreamMapper();
  const events = parseChunks(chunks).flatMap((event) => mapper.push(JSON.parse(event.data)));
  expect(mapper.done, 'response.completed seen').to.equal(true);
  return events;
}

describe('OpenAI Responses mapper', () => {
  it('maps the stream to blocks: one thinking block per summary part (the last signed with the encrypted content), the text, the tool call', () => {
    const answer = collect(replay([utf8(wire(EVENTS))]));
    expect(answer.content).to.deep.equal([
      { type: 'thinking', thinking: SUMMARY[0]!.text },
      { type: 'thinking', thinking: SUMMARY[1]!.text, signature: 'gAAAAABo-enc' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'call_Xy12', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(answer.stopReason).to.equal('tool_use');
    // input_tokens counts the cached ones; the miss is the rest.
    expect(answer.usage).to.deep.equal({ inputCacheHit: 1024, inputCacheMiss: 176, output: 180 });
  });

  it('gives the same events however the bytes are cut', () => {
    const bytes = utf8(wire(EVENTS));
    const whole = replay([bytes]);
    // Every 7th cut of ~8 KB: each kind of spot (inside a field name, a value, a multi-byte character, between events) is hit many times.
    for (const [cut, chunks] of twoWaySplits(bytes)) if (cut % 7 === 0) expect(replay(chunks), `cut at ${cut}`).to.deep.equal(whole);
  });

  it('maps the plain Response to the same answer as its stream', () => {
    const plain = collect(fromResponsesJson({ ...RESPONSE, status: 'completed', output: DONE_ITEMS, usage: USAGE }));
    const streamed = collect(replay([utf8(wire(EVENTS))]));
    expect(plain.content).to.deep.equal(streamed.content);
    expect(plain.usage).to.deep.equal(streamed.usage);
    expect(plain.stopReason).to.equal(streamed.stopReason);
  });

  it('relayed through the Responses encoder, gives the client the upstream events back (ids, fields, items), renumbered, with its own usage', () => {
    const usage: ResponseUsage = { input_tokens: 1200, output_tokens: 180, cached_input_tokens: 1024, price_tier: 'thinking', thinking: true };
    const encoder = new ResponsesEncoder({ id: 'resp_gateway', model: RESPONSE.model, echo: {}, relay: true, encryptedReasoning: true, tools: [] });
    let out = '';
    let started = false;
    for (const event of replay([utf8(wire(EVENTS))])) {
      if (!started && event.type !== 'message_start' && event.type !== 'usage') {
        started = true;
        out += encoder.start();
      }
      out += event.type === 'message_stop' ? encoder.finish(event, usage) : encoder.push(event);
    }
    const sent = parseSse(out);
    expect(sent.map((e) => e.event)).to.deep.equal(EVENTS.map((e) => e.type));
    expect(sent.map((e) => e.data.sequence_number)).to.deep.equal(EVENTS.map((_, i) => i));
    const strip = (data: Record<string, any>): Record<string, unknown> => {
      const { sequence_number: _sequence, ...rest } = data;
      if (!rest.response) return rest;
      const { id: _id, created_at: _at, usage: _usage, output_text: _text, ...response } = rest.response;
      return { ...rest, response };
    };
    sent.forEach((event, i) => expect(strip(event.data), `event ${i} (${event.event})`).to.deep.equal(strip(EVENTS[i]!)));
    const completed = sent.at(-1)!.data.response;
    expect(completed.id).to.equal('resp_gateway');
    expect(completed.usage).to.deep.include({ input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens_details: { reasoning_tokens: 128 }, thinking: true });
  });

  it('turns response.failed and error events into upstream errors', () => {
    const failed = new ResponsesStreamMapper();
    failed.push({ type: 'response.created', response: RESPONSE });
    expect(() => failed.push({ type: 'response.failed', response: { ...RESPONSE, status: 'failed', error: { code: 'server_error', message: 'boom' } } }))
      .to.throw(UpstreamError, 'boom')
      .with.property('upstreamType', 'server_error');
    const errored = new ResponsesStreamMapper();
    errored.push({ type: 'response.created', response: RESPONSE });
    expect(() => errored.push({ type: 'error', code: 'rate_limit_exceeded', message: 'slow down' })).to.throw(UpstreamError, 'slow down');
    expect(() => new ResponsesStreamMapper().push({ type: 'response.output_text.delta', delta: 'x' })).to.throw(UpstreamError, 'response.created');
  });

  it('reads an incomplete response as max_tokens (or refusal for content_filter)', () => {
    const stop = (reason: string) => fromResponsesJson({ ...RESPONSE, status: 'incomplete', incomplete_details: { reason }, output: [], usage: USAGE }).at(-1);
    expect(stop('max_output_tokens')).to.deep.include({ type: 'message_stop', stopReason: 'max_tokens' });
    expect(stop('content_filter')).to.deep.include({ type: 'message_stop', stopReason: 'refusal' });
  });
});
