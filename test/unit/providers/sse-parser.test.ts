import { expect } from 'chai';
import fc from 'fast-check';
import { parseSseStream, SseParser } from '../../../src/providers/sse-parser';
import { fixture, parseChunks, twoWaySplits, utf8 } from './canonical-events';

const FIXTURES = [
  ['anthropic_basic_text_stream.sse', 9],
  ['anthropic_tool_use_stream.sse', 15],
  ['anthropic_message_delta_cumulative_usage.sse', 6],
  ['openai_chat_stream_text_with_usage.sse', 6],
  ['openai_chat_stream_tool_call_with_usage.sse', 14],
] as const;

describe('SSE parser', () => {
  for (const [name, count] of FIXTURES) {
    it(`parses ${name} into ${count} events with JSON data`, () => {
      const events = parseChunks([fixture(name)]);
      expect(events).to.have.length(count);
      for (const event of events) {
        if (event.data !== '[DONE]') expect(() => JSON.parse(event.data) as unknown).not.to.throw();
      }
    });

    it(`gives the same events for ${name} cut at every byte`, () => {
      const bytes = fixture(name);
      const whole = parseChunks([bytes]);
      for (const [cut, chunks] of twoWaySplits(bytes)) {
        expect(parseChunks(chunks), `cut at byte ${cut}`).to.deep.equal(whole);
      }
    });
  }

  it('keeps the event name of Anthropic events and leaves it unset for OpenAI chunks', () => {
    const [anthropic] = parseChunks([fixture('anthropic_basic_text_stream.sse')]);
    expect(anthropic?.event).to.equal('message_start');
    const [openai] = parseChunks([fixture('openai_chat_stream_text_with_usage.sse')]);
    expect(openai).to.not.have.property('event');
  });

  it('reassembles a multi-byte UTF-8 character split across chunks', () => {
    const bytes = utf8('data: {"text":"你好 👋"}\n\n');
    const whole = parseChunks([bytes]);
    expect(JSON.parse(whole[0]?.data ?? '')).to.deep.equal({ text: '你好 👋' });
    for (const [cut, chunks] of twoWaySplits(bytes)) expect(parseChunks(chunks), `cut at ${cut}`).to.deep.equal(whole);
  });

  it('treats CRLF split between \\r and \\n as one line break', () => {
    const parser = new SseParser();
    expect(parser.push('event: a\r\ndata: 1\r')).to.deep.equal([]);
    expect(parser.push('\n\r')).to.deep.equal([{ event: 'a', data: '1' }]);
    expect(parser.push('\ndata: 2\r\n\r\n')).to.deep.equal([{ data: '2' }]);
  });

  it('accepts bare CR line endings', () => {
    expect(parseChunks([utf8('data: x\r\rdata: y\r\r')])).to.deep.equal([{ data: 'x' }, { data: 'y' }]);
  });

  it('joins multi-line data with newlines and ignores comments and unknown fields', () => {
    const events = parseChunks([utf8(': keep-alive\nretry: 100\nevent: note\ndata: line one\ndata:line two\nfoo: bar\n\n')]);
    expect(events).to.deep.equal([{ event: 'note', data: 'line one\nline two' }]);
  });

  it('strips only one space after the colon', () => {
    expect(parseChunks([utf8('data:  two spaces\n\n')])).to.deep.equal([{ data: ' two spaces' }]);
  });

  it('does not dispatch an event without data lines', () => {
    expect(parseChunks([utf8('event: ping\n\ndata: real\n\n')])).to.deep.equal([{ data: 'real' }]);
  });

  it('drops a byte-order mark at the start of the stream', () => {
    const chunks = [new Uint8Array([0xef, 0xbb]), new Uint8Array([0xbf]), utf8('data: a\n\n')];
    expect(parseChunks(chunks)).to.deep.equal([{ data: 'a' }]);
  });

  it('discards an event cut off before its blank line, as the spec says', () => {
    expect(parseChunks([utf8('data: complete\n\ndata: {"half":')])).to.deep.equal([{ data: 'complete' }]);
  });

  it('remembers the last event id', () => {
    expect(parseChunks([utf8('id: 7\ndata: a\n\ndata: b\n\n')])).to.deep.equal([
      { data: 'a', id: '7' },
      { data: 'b', id: '7' },
    ]);
  });

  it('parses an async byte stream', async () => {
    async function* source(): AsyncGenerator<Uint8Array> {
      yield utf8('event: x\nda');
      yield utf8('ta: 1\n\n');
    }
    const events = [];
    for await (const event of parseSseStream(source())) events.push(event);
    expect(events).to.deep.equal([{ event: 'x', data: '1' }]);
  });

  it('gives the same events however a stream of random events is chunked', () => {
    const eventArb = fc.record({
      event: fc.option(fc.constantFrom('message_start', 'content_block_delta', 'ping'), { nil: undefined }),
      lines: fc.array(fc.string({ unit: 'grapheme' }).filter((s) => !/[\r\n]/.test(s)), { minLength: 1, maxLength: 3 }),
      eol: fc.constantFrom('\n', '\r\n', '\r'),
    });
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), (events, cuts) => {
        const text = events
          .map(({ event, lines, eol }) => (event ? `event: ${event}${eol}` : '') + lines.map((l) => `data: ${l}${eol}`).join('') + eol)
          .join('');
        const bytes = utf8(text);
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let from = 0;
        for (const point of [...points, bytes.length]) {
          chunks.push(bytes.subarray(from, point));
          from = point;
        }
        const expected = events.map(({ event, lines }) => ({ ...(event ? { event } : {}), data: lines.join('\n') }));
        expect(parseChunks(chunks)).to.deep.equal(expected);
      }),
    );
  });
});
