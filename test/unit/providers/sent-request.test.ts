// What a call whose upstream usage never arrives is billed for: the input
// tokens of the request the upstream was sent, counted locally. Every text
// the model reads counts, in each protocol's body; ids, signatures and
// binary payloads do not; an image or a binary document counts a fixed amount.
import { expect } from 'chai';
import { countSentBody, SENT_DOCUMENT_TOKENS, SENT_IMAGE_TOKENS, SentRequest } from '../../../src/providers/sent-request';
import { countTokens } from '../../../src/tokenizer';

const SYSTEM = 'You are the billing assistant of a gateway that meters every token it forwards, exactly and in integers.';
const ASK = 'Please compare the three invoices below and tell me which line items differ, and by how much money in total.';
const TOOL_QUERY = 'invoices for the cost centre 研发部 between the first and the last day of November';
const TOOL_RESULT = 'Invoice 17: 12 units at 3.50; invoice 18: 12 units at 3.75; invoice 19: 13 units at 3.50, shipped late.';
const TOOL_DESCRIPTION = 'Looks invoices up in the ledger by free-text query and returns their lines as plain text.';
const SCHEMA = { type: 'object', properties: { query: { type: 'string', description: 'what to look for' } }, required: ['query'] };

/** The words of the conversation, as the tokenizer sees them: what every protocol's body must be billed at least. */
const WORDS = countTokens([SYSTEM, ASK, JSON.stringify({ query: TOOL_QUERY }), TOOL_RESULT, 'lookup', TOOL_DESCRIPTION, JSON.stringify(SCHEMA)].join('\n'));

const anthropic = (extra: { blocks?: unknown[]; assistant?: unknown[] } = {}) => ({
  model: 'claude-x',
  max_tokens: 1024,
  stream: true,
  system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
  messages: [
    { role: 'user', content: ASK },
    { role: 'assistant', content: [...(extra.assistant ?? []), { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: { query: TOOL_QUERY } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: TOOL_RESULT }] }, ...(extra.blocks ?? [])] },
  ],
  tools: [{ name: 'lookup', description: TOOL_DESCRIPTION, input_schema: SCHEMA }],
});

const chat = (parts: unknown[] = []) => ({
  model: 'gpt-x',
  stream: true,
  stream_options: { include_usage: true },
  max_tokens: 1024,
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: parts.length > 0 ? [{ type: 'text', text: ASK }, ...parts] : ASK },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_01', type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ query: TOOL_QUERY }) } }] },
    { role: 'tool', tool_call_id: 'call_01', content: TOOL_RESULT },
  ],
  tools: [{ type: 'function', function: { name: 'lookup', description: TOOL_DESCRIPTION, parameters: SCHEMA } }],
});

const responses = (items: unknown[] = []) => ({
  model: 'gpt-x',
  store: false,
  stream: true,
  instructions: SYSTEM,
  input: [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: ASK }] },
    ...items,
    { type: 'function_call', call_id: 'call_01', name: 'lookup', arguments: JSON.stringify({ query: TOOL_QUERY }) },
    { type: 'function_call_output', call_id: 'call_01', output: TOOL_RESULT },
  ],
  tools: [{ type: 'function', name: 'lookup', description: TOOL_DESCRIPTION, parameters: SCHEMA, strict: false }],
});

const base64 = (bytes: number): string => Buffer.alloc(bytes, 7).toString('base64');

describe('the input of what an upstream was sent', () => {
  it('counts every text the model reads in each protocol’s body: system, messages, tool calls, results and definitions', async () => {
    for (const [name, body] of Object.entries({ anthropic: anthropic(), chat: chat(), responses: responses() })) {
      const counted = await countSentBody(body);
      // The body's own words, plus a few tokens of names and roles the walk keeps (never the ids or knobs).
      expect(counted, name).to.be.within(WORDS, WORDS + 12);
    }
  });

  it('counts an image or audio clip at a fixed amount, whatever its bytes, in every protocol', async () => {
    const pixels = base64(300_000);
    const pairs: Array<[string, unknown, unknown]> = [
      ['anthropic', anthropic(), anthropic({ blocks: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: pixels } }] })],
      ['anthropic url', anthropic(), anthropic({ blocks: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] })],
      ['chat', chat([{ type: 'text', text: '' }]), chat([{ type: 'text', text: '' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${pixels}`, detail: 'high' } }])],
      ['chat audio', chat([{ type: 'text', text: '' }]), chat([{ type: 'text', text: '' }, { type: 'input_audio', input_audio: { data: pixels, format: 'wav' } }])],
      ['responses', responses(), responses([{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: `data:image/jpeg;base64,${pixels}` }] }])],
    ];
    for (const [name, without, withImage] of pairs) {
      expect((await countSentBody(withImage)) - (await countSentBody(without)), name).to.equal(SENT_IMAGE_TOKENS);
    }
  });

  it('counts a tiny inline image by its bytes, never more than the reservation (which bounds it by its bytes) holds', async () => {
    const dot = base64(60);
    const withDots = anthropic({ blocks: Array.from({ length: 10 }, () => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: dot } })) });
    expect((await countSentBody(withDots)) - (await countSentBody(anthropic()))).to.equal(10 * dot.length);
    const dataUrl = `data:image/png;base64,${dot}`;
    const chatDot = chat([{ type: 'text', text: '' }, { type: 'image_url', image_url: { url: dataUrl } }]);
    expect((await countSentBody(chatDot)) - (await countSentBody(chat([{ type: 'text', text: '' }])))).to.equal(dataUrl.length);
  });

  it('counts a binary document at a fixed amount and a text document by its words', async () => {
    const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: base64(200_000) } };
    const notes = 'Meeting notes: the November invoices are disputed until the supplier sends corrected ones.';
    const text = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: notes }, title: 'Notes' };
    const plain = await countSentBody(anthropic());
    expect((await countSentBody(anthropic({ blocks: [pdf] }))) - plain).to.equal(SENT_DOCUMENT_TOKENS);
    expect((await countSentBody(anthropic({ blocks: [text] }))) - plain).to.be.within(countTokens(notes), countTokens(notes) + 4);
    const file = { type: 'file', file: { file_data: `data:application/pdf;base64,${base64(50_000)}`, filename: 'invoice.pdf' } };
    expect((await countSentBody(chat([{ type: 'text', text: '' }, file]))) - (await countSentBody(chat([{ type: 'text', text: '' }])))).to.equal(SENT_DOCUMENT_TOKENS);
  });

  it('does not count ids, signatures, encrypted reasoning or redacted thinking', async () => {
    const opaque = 'Zm9v'.repeat(5_000);
    const thinking = { type: 'thinking', thinking: '', signature: opaque };
    const redacted = { type: 'redacted_thinking', data: opaque };
    expect(await countSentBody(anthropic({ assistant: [thinking, redacted] }))).to.equal(await countSentBody(anthropic()));
    const reasoning = { type: 'reasoning', id: `rs_${opaque}`, summary: [], encrypted_content: opaque };
    expect(await countSentBody(responses([reasoning]))).to.equal(await countSentBody(responses()));
  });

  it('bills nothing for a request that never reached its upstream, and counts a sent one once', async () => {
    let counts = 0;
    const sent = new SentRequest();
    sent.built(async () => {
      counts++;
      return 42;
    });
    expect(sent.reached).to.equal(false);
    expect(await sent.inputTokens()).to.equal(0);
    sent.markSent();
    expect([await sent.inputTokens(), await sent.inputTokens()]).to.deep.equal([42, 42]);
    expect(counts).to.equal(1);
    // A stale pooled connection: the request is sent again elsewhere, and counts only once it is.
    sent.markUnsent();
    expect(await sent.inputTokens()).to.equal(0);
  });
});
