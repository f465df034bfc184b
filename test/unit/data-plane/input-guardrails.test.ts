// Input guardrails see everything the model sees (docs/architecture.md §6): every kind of
// text in both protocol forms, one case per kind, and kinds added later. An
// untouched body is handed on as the very object the caller sent.
import { expect } from 'chai';
import { guardChatBody } from '../../../src/data-plane/chat/chat.guard';
import { guardMessagesBody } from '../../../src/data-plane/messages/messages.guard';
import { createGuardrails, defaultDetectors, resolvePolicies } from '../../../src/guardrails';
import { AppError } from '../../../src/errors';

const PHONE = '13800138000';
const MASK = '[REDACTED:cn-mobile]';
const guardrails = createGuardrails({ detectors: defaultDetectors(['forbidden']), policies: resolvePolicies() });

function messages(body: Record<string, unknown>) {
  const inspect = guardrails.inputInspector();
  const out = guardMessagesBody(body, inspect);
  return { out: out as any, hits: inspect.hits };
}

function chat(body: Record<string, unknown>) {
  const inspect = guardrails.inputInspector();
  const out = guardChatBody(body, inspect);
  return { out: out as any, hits: inspect.hits };
}

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

const user = (content: unknown) => ({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content }] });

describe('input guardrails: Messages form, every kind of text', () => {
  const cases: Array<[string, Record<string, unknown>, (out: any) => unknown]> = [
    ['a system string', { model: 'm', system: `call ${PHONE}`, messages: [] }, (o) => o.system],
    ['a system block (cache_control kept)', { model: 'm', system: [{ type: 'text', text: `call ${PHONE}`, cache_control: { type: 'ephemeral' } }], messages: [] }, (o) => o.system[0]],
    ['a system turn inside messages', { model: 'm', messages: [{ role: 'system', content: `call ${PHONE}` }] }, (o) => o.messages[0].content],
    ['string content', user(`call ${PHONE}`), (o) => o.messages[0].content],
    ['a text block', user([{ type: 'text', text: `call ${PHONE}` }]), (o) => o.messages[0].content[0].text],
    ['a tool result string', user([{ type: 'tool_result', tool_use_id: 't', content: `call ${PHONE}` }]), (o) => o.messages[0].content[0].content],
    ['a tool result block', user([{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: `call ${PHONE}` }] }]), (o) => o.messages[0].content[0].content[0].text],
    ['tool input', user([{ type: 'tool_use', id: 't', name: 'n', input: { to: PHONE } }]), (o) => o.messages[0].content[0].input.to],
    ['a plain-text document', user([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: `call ${PHONE}` } }]), (o) => o.messages[0].content[0].source.data],
    ['a content document', user([{ type: 'document', source: { type: 'content', content: [{ type: 'text', text: `call ${PHONE}` }] } }]), (o) => o.messages[0].content[0].source.content[0].text],
    ['a document title', user([{ type: 'document', source: { type: 'url', url: 'https://e.com/a.pdf' }, title: `call ${PHONE}` }]), (o) => o.messages[0].content[0].title],
    ['a search result', user([{ type: 'search_result', source: 's', title: 't', content: [{ type: 'text', text: `call ${PHONE}` }] }]), (o) => o.messages[0].content[0].content[0].text],
    ['a block kind added later', user([{ type: 'future_kind', nested: { deeper: [`call ${PHONE}`] } }]), (o) => o.messages[0].content[0].nested.deeper[0]],
    ['a server tool call', user([{ type: 'server_tool_use', id: 's', name: 'web_search', input: { query: `call ${PHONE}` } }]), (o) => o.messages[0].content[0].input.query],
  ];
  for (const [kind, body, pick] of cases) {
    it(`masks ${kind}`, () => {
      const before = structuredClone(body);
      const { out, hits } = messages(body);
      expect(JSON.stringify(pick(out))).to.contain(MASK).and.not.contain(PHONE);
      expect(hits).to.deep.equal({ 'cn-mobile': 1 });
      expect(body, 'the caller’s body is not changed in place').to.deep.equal(before);
    });
  }

  it('leaves signed thinking, images, ids and signatures alone, and an untouched body is the same object', () => {
    const body = user([
      { type: 'thinking', thinking: `thought about ${PHONE}`, signature: PHONE },
      { type: 'redacted_thinking', data: PHONE },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PHONE } },
      { type: 'future_kind', id: PHONE, signature: PHONE, data: PHONE },
    ]);
    const { out, hits } = messages(body);
    expect(out).to.equal(body);
    expect(hits).to.deep.equal({});
  });

  it('refuses a block-listed phrase with the path of the text that held it', () => {
    const error = refusal(() => messages(user([{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'x' }, { type: 'text', text: 'forbidden' }] }])));
    expect(error.code).to.equal('guardrail_blocked');
    expect(error.field).to.equal('messages.0.content.0.content.1.text');
  });
});

describe('input guardrails: chat form, every kind of text', () => {
  const cases: Array<[string, Record<string, unknown>, (out: any) => unknown]> = [
    ['string content', { messages: [{ role: 'user', content: `call ${PHONE}` }] }, (o) => o.messages[0].content],
    ['a developer message', { messages: [{ role: 'developer', content: `call ${PHONE}` }] }, (o) => o.messages[0].content],
    ['a text part', { messages: [{ role: 'user', content: [{ type: 'text', text: `call ${PHONE}` }] }] }, (o) => o.messages[0].content[0].text],
    ['a refusal part', { messages: [{ role: 'assistant', content: [{ type: 'refusal', refusal: `call ${PHONE}` }] }] }, (o) => o.messages[0].content[0].refusal],
    ['earlier reasoning', { messages: [{ role: 'assistant', content: 'ok', reasoning_content: `call ${PHONE}` }] }, (o) => o.messages[0].reasoning_content],
    ['a tool message', { messages: [{ role: 'tool', tool_call_id: 'c', content: `call ${PHONE}` }] }, (o) => o.messages[0].content],
    ['a part kind added later', { messages: [{ role: 'user', content: [{ type: 'future_part', text_like: `call ${PHONE}` }] }] }, (o) => o.messages[0].content[0].text_like],
  ];
  for (const [kind, body, pick] of cases) {
    it(`masks ${kind}`, () => {
      const { out, hits } = chat(body);
      expect(JSON.stringify(pick(out))).to.contain(MASK).and.not.contain(PHONE);
      expect(hits).to.deep.equal({ 'cn-mobile': 1 });
    });
  }

  it('masks tool call arguments leaf by leaf, so they stay valid JSON; arguments that are not JSON are scanned as text', () => {
    const { out } = chat({
      messages: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'f', arguments: JSON.stringify({ to: PHONE, n: 4111111111111111 }) } },
            { id: 'b', type: 'function', function: { name: 'f', arguments: `{to: ${PHONE}` } },
          ],
        },
      ],
    });
    expect(JSON.parse(out.messages[0].tool_calls[0].function.arguments)).to.deep.equal({ to: MASK, n: '[REDACTED:bank-card]' });
    expect(out.messages[0].tool_calls[1].function.arguments).to.equal(`{to: ${MASK}`);
  });

  it('leaves images, audio and files alone, and an untouched body is the same object', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: `https://e.com/${PHONE}.png` } },
            { type: 'input_audio', input_audio: { data: PHONE, format: 'wav' } },
            { type: 'file', file: { file_data: `data:application/pdf;base64,${PHONE}` } },
          ],
        },
      ],
    };
    const { out, hits } = chat(body);
    expect(out).to.equal(body);
    expect(hits).to.deep.equal({});
  });
});
