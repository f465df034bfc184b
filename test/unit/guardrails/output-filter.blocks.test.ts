// The stream filter across block boundaries and on events without a
// canonical form: a held run carried into the next block of the same kind,
// released at once when that block cannot continue it; obfuscated text read
// through its view while streaming; the strings of raw events, raw deltas and
// server-tool blocks; streamed text in unknown events.
import { expect } from 'chai';
import type { CanonicalEvent } from '../../../src/core/canonical';
import { createGuardrails, defaultDetectors, resolvePolicies, type GuardrailPolicy, type OutputFilter } from '../../../src/guardrails';

const guardrails = (overrides: Partial<Record<string, GuardrailPolicy>> = {}) =>
  createGuardrails({ detectors: defaultDetectors(['forbidden']), policies: resolvePolicies(overrides) });

const feed = (filter: OutputFilter, events: CanonicalEvent[]): CanonicalEvent[] => events.flatMap((event) => filter.push(event));
const start = (index: number, type: 'text' | 'thinking' = 'text'): CanonicalEvent => ({ type: 'block_start', index, block: { type } });
const stop = (index: number): CanonicalEvent => ({ type: 'block_stop', index });
const text = (value: string, index: number): CanonicalEvent => ({ type: 'text_delta', index, text: value });
const END: CanonicalEvent = { type: 'message_stop', stopReason: 'end_turn' };

/** Events with text deltas shown as `index:text` (`tindex:text` for thinking), consecutive ones of a block joined. */
function shape(events: CanonicalEvent[]): string[] {
  const out: string[] = [];
  let last: string | null = null;
  for (const event of events) {
    const delta = event.type === 'text_delta' ? [`${event.index}:`, event.text] : event.type === 'thinking_delta' ? [`t${event.index}:`, event.text] : null;
    if (delta === null) {
      out.push(`${event.type}${'index' in event ? ` ${event.index}` : ''}`);
      last = null;
    } else if (last === delta[0]) out.push(`${out.pop() ?? ''}${delta[1]}`);
    else {
      out.push(`${delta[0]}${delta[1]}`);
      last = delta[0] as string;
    }
  }
  return out;
}

describe('guardrails: output filter across blocks', () => {
  it('masks an address split across two text blocks in the block it starts in, and leaves the rest of it out of the next', () => {
    const filter = guardrails().createOutputFilter();
    const out = feed(filter, [start(0), text('Write to li.lei@exa', 0), stop(0), start(1), text('mple.cn today.', 1), stop(1), END]);
    expect(shape(out)).to.deep.equal(['block_start 0', '0:Write to [REDACTED:email]', 'block_stop 0', 'block_start 1', '1: today.', 'block_stop 1', 'message_stop']);
    expect(filter.hits).to.deep.equal({ email: 1 });
  });

  it('releases the carried run at once when the next block shows it cannot continue, and lets nothing overtake it', () => {
    const filter = guardrails().createOutputFilter();
    expect(shape(feed(filter, [start(0), text('call 139 1234', 0), stop(0)]))).to.deep.equal(['block_start 0', '0:call ']);
    // The block_start waits behind the held run too.
    expect(shape(filter.push(start(1)))).to.deep.equal([]);
    expect(shape(filter.push(text('。好的', 1)))).to.deep.equal(['0:139 1234', 'block_stop 0', 'block_start 1', '1:。好的']);
  });

  it('masks a mobile number split across blocks, and one that a non-digit after the boundary completes', () => {
    const split = feed(guardrails().createOutputFilter(), [start(0), text('call 139 1234', 0), stop(0), start(1), text(' 5678 now', 1), stop(1), END]);
    expect(shape(split).filter((entry) => /^\d:/.test(entry))).to.deep.equal(['0:call [REDACTED:cn-mobile]', '1: now']);
    const whole = feed(guardrails().createOutputFilter(), [start(0), text('call 13912345678', 0), stop(0), start(1), text('，谢谢', 1), stop(1), END]);
    expect(shape(whole).filter((entry) => /^\d:/.test(entry))).to.deep.equal(['0:call [REDACTED:cn-mobile]', '1:，谢谢']);
  });

  it('carries thinking into thinking, but not text into a tool call or a thinking block', () => {
    const thinking = feed(guardrails().createOutputFilter(), [
      start(0, 'thinking'),
      { type: 'thinking_delta', index: 0, text: 'user is li.lei@exa' },
      stop(0),
      start(1, 'thinking'),
      { type: 'thinking_delta', index: 1, text: 'mple.cn ok' },
      stop(1),
      END,
    ]);
    expect(shape(thinking).filter((entry) => entry.startsWith('t'))).to.deep.equal(['t0:user is [REDACTED:email]', 't1: ok']);
    const other = feed(guardrails().createOutputFilter(), [
      start(0),
      text('mail li.lei@exa', 0),
      stop(0),
      { type: 'block_start', index: 1, block: { type: 'tool_use', id: 't', name: 'f' } },
      { type: 'tool_input_delta', index: 1, partialJson: 'mple.cn' },
      stop(1),
      END,
    ]);
    // Text and a tool's input do not read as one: the held text ends as it was.
    expect(shape(other).filter((entry) => entry.startsWith('0:'))).to.deep.equal(['0:mail li.lei@exa']);
  });

  it('does not join blocks that interleave', () => {
    const filter = createGuardrails({ detectors: defaultDetectors([]), policies: resolvePolicies() }).createOutputFilter();
    const out = feed(filter, [start(0), text('li.lei@exa', 0), start(1), text('x', 1), stop(0), text('mple.cn', 1), stop(1), END]);
    expect(filter.hits).to.deep.equal({});
    expect(shape(out).filter((entry) => /^\d:/.test(entry))).to.deep.equal(['0:li.lei@exa', '1:x', '1:mple.cn']);
  });

  it('blocks on a match across blocks: nothing of it goes out, the blocks the client saw are closed', () => {
    const filter = guardrails({ email: 'block' }).createOutputFilter();
    const out = feed(filter, [start(0), text('Write to li.lei@exa', 0), stop(0), start(1), text('mple.cn today.', 1), stop(1), END]);
    expect(filter.blocked).to.equal('email');
    expect(shape(out)).to.deep.equal(['block_start 0', '0:Write to ', 'block_stop 0', 'message_stop']);
  });
});

describe('guardrails: output filter on obfuscated streamed text', () => {
  it('reads invisible chars, full-width forms and escapes cut across deltas, and masks the raw span', () => {
    const filter = guardrails().createOutputFilter();
    const pieces = ['mail li\u200B', '.lei%4', '0exam\u00AD', 'ple.cn or ', '１３９１２３', '４５６７８ &#6', '4;x'];
    const out = feed(filter, [start(0), ...pieces.map((piece) => text(piece, 0)), stop(0), END]);
    // Only matches are masked; the rest goes out as it was sent.
    expect(shape(out).filter((entry) => entry.startsWith('0:'))).to.deep.equal(['0:mail [REDACTED:email] or [REDACTED:cn-mobile] &#64;x']);
    expect(filter.hits).to.deep.equal({ email: 1, 'cn-mobile': 1 });
  });

  it('holds a "%" or "&" at the end of a delta only until the next char shows it is no escape', () => {
    // E-mail flagged: it would otherwise hold "%" as part of a local part.
    const filter = guardrails({ email: 'flag' }).createOutputFilter();
    expect(shape(filter.push(text('上涨一半%', 0)))).to.deep.equal(['0:上涨一半']);
    expect(shape(filter.push(text('，a &', 0)))).to.deep.equal(['0:%，a ']);
    expect(shape(filter.push(text('& b', 0)))).to.deep.equal(['0:&& b']);
  });
});

describe('guardrails: output filter on events without a canonical form', () => {
  it('scans the strings of raw events, raw deltas and server-tool blocks, leaving ids and types alone', () => {
    const filter = guardrails().createOutputFilter();
    const out = feed(filter, [
      { type: 'block_start', index: 0, block: { type: 'other', raw: { type: 'web_search_tool_result', tool_use_id: 'li.lei@example.cn', content: [{ title: 'mail li.lei@example.cn', url: 'https://x/li.lei@example.cn' }] } } },
      stop(0),
      { type: 'raw_delta', index: 1, delta: { type: 'citations_delta', citation: { cited_text: 'call 13912345678' } } },
      { type: 'raw_event', event: 'response.future.note', data: { type: 'response.future.note', item_id: 'it_1', note: ['key sk-proj-4bN7xQ2mR9kT1vW8yZ3cL6fH0jP5'] } },
    ]);
    expect(out).to.deep.equal([
      { type: 'block_start', index: 0, block: { type: 'other', raw: { type: 'web_search_tool_result', tool_use_id: 'li.lei@example.cn', content: [{ title: 'mail [REDACTED:email]', url: 'https://x/li.lei@example.cn' }] } } },
      stop(0),
      { type: 'raw_delta', index: 1, delta: { type: 'citations_delta', citation: { cited_text: 'call [REDACTED:cn-mobile]' } } },
      { type: 'raw_event', event: 'response.future.note', data: { type: 'response.future.note', item_id: 'it_1', note: ['key [REDACTED:api-secret]'] } },
    ]);
    expect(filter.hits).to.deep.equal({ email: 1, 'cn-mobile': 1, 'api-secret': 1 });
  });

  it('reads the pieces of a text stream as one text, and gives an event that repeats it whole the same result, counted once', () => {
    const filter = guardrails().createOutputFilter();
    const piece = (delta: string): CanonicalEvent => ({
      type: 'raw_event',
      event: 'response.code_interpreter_call_code.delta',
      data: { type: 'response.code_interpreter_call_code.delta', item_id: 'ci_1', output_index: 0, delta },
      textStream: { id: 7, field: 'delta' },
    });
    const code = "send('li.lei@example.cn')";
    const out = feed(filter, [
      piece(code.slice(0, 9)),
      piece(code.slice(9, 16)),
      piece(code.slice(16)),
      stop(7),
      { type: 'raw_event', event: 'response.code_interpreter_call_code.done', data: { type: 'response.code_interpreter_call_code.done', item_id: 'ci_1', code } },
    ]);
    const deltas = out.flatMap((event) => (event.type === 'raw_event' && event.event.endsWith('.delta') ? [event.data.delta as string] : []));
    expect(deltas.join('')).to.equal("send('[REDACTED:email]')");
    expect(out.every((event) => event.type !== 'raw_event' || event.data.item_id === 'ci_1')).to.equal(true);
    const done = out.at(-1) as Extract<CanonicalEvent, { type: 'raw_event' }>;
    expect(done.data.code).to.equal("send('[REDACTED:email]')");
    expect(filter.hits).to.deep.equal({ email: 1 });
  });
});
