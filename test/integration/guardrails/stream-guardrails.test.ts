// Output guardrails on every text a streamed reply carries, attacked the way
// the findings did: an address split across two text blocks (Messages from an
// Anthropic upstream, Responses content parts from a Responses upstream), and
// a Responses pass-through stream whose secrets travel in hosted-tool events
// (`code_interpreter_call_code.delta`, `mcp_call_arguments.delta`, their
// `.done` events and done items), in event kinds the gateway does not know,
// and in the final `response.completed`. Nothing raw may reach the client, and
// what `response.completed` holds must agree with what was streamed.
import { expect } from 'chai';
import { api, createAccount, createKey } from '../../support/app';
import { usageRecord } from '../../support/data-plane';
import { parseSse, type SseEvent } from '../../support/sse-client';
import { startGuardrailGateway, type GuardrailGateway } from './guardrail-gateway';

const EMAIL = 'li.lei@example.cn';
const MOBILE = '13912345678';
const KEY = 'sk-proj-4bN7xQ2mR9kT1vW8yZ3cL6fH0jP5sD2g';
const CARD = '4111 1111 1111 1111';
/** Each raw value in pieces of `size` chars, as an upstream may stream it. */
const pieces = (text: string, size: number): string[] => text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];

describe('guardrails on streamed output: split blocks and every event a Responses stream carries', function () {
  this.timeout(60_000);
  let gateway: GuardrailGateway;

  before(async () => {
    gateway = await startGuardrailGateway();
  });

  after(async () => {
    await gateway?.close();
  });

  async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; raw: string; events: SseEvent[]; requestId: string }> {
    const response = await gateway.post(path, body);
    return { ...response, events: parseSse(response.raw) };
  }

  const neverRaw = (raw: string) => {
    for (const value of [EMAIL, MOBILE, KEY, CARD, 'li.lei', '4bN7xQ2mR9kT']) expect(raw, value).not.to.contain(value);
  };

  it('Messages from an Anthropic upstream: an address split across two text blocks is masked in the block it starts in', async () => {
    const [head, tail] = [EMAIL.slice(0, 9), EMAIL.slice(9)];
    gateway.anthropic.script({
      rawEvents: [
        ['message_start', { type: 'message_start', message: { id: 'msg_up', type: 'message', role: 'assistant', model: 'claude-g', content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } }],
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `Write to ${head}` } }],
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: `${tail} today.` } }],
        ['content_block_stop', { type: 'content_block_stop', index: 1 }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }],
        ['message_stop', { type: 'message_stop' }],
      ],
    });
    const response = await post('/v1/messages', { model: 'g-claude', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'mail?' }] });

    expect(response.status, response.raw).to.equal(200);
    neverRaw(response.raw);
    const blockText = (index: number) =>
      response.events.filter((e) => e.data?.type === 'content_block_delta' && e.data.index === index).map((e) => e.data.delta.text as string).join('');
    expect(blockText(0)).to.equal('Write to [REDACTED:email]');
    expect(blockText(1)).to.equal(' today.');
    expect(response.events.map((e) => e.event).filter((name) => name === 'content_block_start' || name === 'content_block_stop')).to.deep.equal([
      'content_block_start',
      'content_block_stop',
      'content_block_start',
      'content_block_stop',
    ]);
    expect((await usageRecord(response.requestId)).guardrail_hits).to.deep.equal({ email: 1 });
  });

  describe('a Responses pass-through stream', () => {
    const created = { id: 'resp_up', object: 'response', created_at: 1, status: 'in_progress', model: 'gpt-g', output: [], usage: null };
    const code = `import smtplib\nsmtplib.SMTP('mail').sendmail('${EMAIL}', ['${EMAIL}'], 'key ${KEY}')\n`;
    const args = JSON.stringify({ to: EMAIL, token: KEY });
    const interpreter = { id: 'ci_1', type: 'code_interpreter_call', status: 'completed', container_id: 'cntr_1', code, outputs: [{ type: 'logs', logs: `sent; call ${MOBILE}` }] };
    const mcp = { id: 'mcp_1', type: 'mcp_call', status: 'completed', server_label: 'crm', name: 'send_mail', arguments: args, output: `queued for ${EMAIL}`, error: null };
    const message = {
      id: 'msg_up',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [
        { type: 'output_text', text: `Done. Mail ${EMAIL.slice(0, 7)}`, annotations: [] },
        { type: 'output_text', text: `${EMAIL.slice(7)} if it fails.`, annotations: [] },
      ],
    };
    const completed = {
      type: 'response.completed',
      response: { ...created, status: 'completed', output: [interpreter, mcp, message], output_text: `${EMAIL} ${KEY}`, usage: { input_tokens: 30, input_tokens_details: { cached_tokens: 0 }, output_tokens: 40, total_tokens: 70 } },
    };
    const events = [
      { type: 'response.created', response: created },
      { type: 'response.output_item.added', output_index: 0, item: { ...interpreter, status: 'in_progress', code: '', outputs: null } },
      ...pieces(code, 5).map((delta) => ({ type: 'response.code_interpreter_call_code.delta', output_index: 0, item_id: 'ci_1', delta })),
      { type: 'response.code_interpreter_call_code.done', output_index: 0, item_id: 'ci_1', code },
      { type: 'response.code_interpreter_call.interpreting', output_index: 0, item_id: 'ci_1' },
      { type: 'response.code_interpreter_call.completed', output_index: 0, item_id: 'ci_1' },
      { type: 'response.output_item.done', output_index: 0, item: interpreter },
      { type: 'response.output_item.added', output_index: 1, item: { ...mcp, status: 'in_progress', arguments: '', output: null } },
      ...pieces(args, 4).map((delta) => ({ type: 'response.mcp_call_arguments.delta', output_index: 1, item_id: 'mcp_1', delta })),
      { type: 'response.mcp_call_arguments.done', output_index: 1, item_id: 'mcp_1', arguments: args },
      // Kinds this gateway does not know: a streamed text, and a note with text of its own.
      ...pieces(`card ${CARD} on file`, 3).map((delta) => ({ type: 'response.future_widget.delta', output_index: 1, item_id: 'mcp_1', delta })),
      { type: 'response.future_widget.note', output_index: 1, item_id: 'mcp_1', note: { text: `reach ${MOBILE}` } },
      { type: 'response.output_item.done', output_index: 1, item: mcp },
      { type: 'response.output_item.added', output_index: 2, item: { ...message, status: 'in_progress', content: [] } },
      ...message.content.flatMap((part, i) => [
        { type: 'response.content_part.added', output_index: 2, item_id: 'msg_up', content_index: i, part: { ...part, text: '' } },
        ...pieces(part.text, 6).map((delta) => ({ type: 'response.output_text.delta', output_index: 2, item_id: 'msg_up', content_index: i, delta })),
        { type: 'response.output_text.done', output_index: 2, item_id: 'msg_up', content_index: i, text: part.text },
        { type: 'response.content_part.done', output_index: 2, item_id: 'msg_up', content_index: i, part },
      ]),
      { type: 'response.output_item.done', output_index: 2, item: message },
      completed,
    ];

    const joined = (all: SseEvent[], type: string, field = 'delta') => all.filter((e) => e.event === type).map((e) => e.data[field] as string).join('');

    it('masks every text: hosted-tool deltas and their done events and items, unknown events, and response.completed agrees with the stream', async () => {
      gateway.responses.script({ rawEvents: events });
      const response = await post('/v1/responses', { model: 'g-gpt', input: 'send it', stream: true, tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] });

      expect(response.status, response.raw).to.equal(200);
      neverRaw(response.raw);
      const all = response.events;
      const maskedCode = joined(all, 'response.code_interpreter_call_code.delta');
      expect(maskedCode).to.equal(`import smtplib\nsmtplib.SMTP('mail').sendmail('[REDACTED:email]', ['[REDACTED:email]'], 'key [REDACTED:api-secret]')\n`);
      expect(all.find((e) => e.event === 'response.code_interpreter_call_code.done')!.data.code).to.equal(maskedCode);
      const maskedArgs = joined(all, 'response.mcp_call_arguments.delta');
      expect(JSON.parse(maskedArgs)).to.deep.equal({ to: '[REDACTED:email]', token: '[REDACTED:api-secret]' });
      expect(all.find((e) => e.event === 'response.mcp_call_arguments.done')!.data.arguments).to.equal(maskedArgs);
      expect(joined(all, 'response.future_widget.delta')).to.equal('card [REDACTED:bank-card] on file');
      expect(all.find((e) => e.event === 'response.future_widget.note')!.data.note.text).to.equal('reach [REDACTED:cn-mobile]');

      const doneItems = all.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.item);
      expect(doneItems[0]).to.deep.include({ code: maskedCode, outputs: [{ type: 'logs', logs: 'sent; call [REDACTED:cn-mobile]' }] });
      expect(doneItems[1]).to.deep.include({ arguments: maskedArgs, output: 'queued for [REDACTED:email]' });
      // The address split across two content parts is masked in the part it starts in.
      expect(doneItems[2].content.map((part: any) => part.text)).to.deep.equal(['Done. Mail [REDACTED:email]', ' if it fails.']);

      const final = all.at(-1)!;
      expect(final.event).to.equal('response.completed');
      expect(final.data.response.output).to.deep.equal(doneItems);
      expect((await usageRecord(response.requestId)).guardrail_hits).to.deep.equal({ email: 5, 'api-secret': 2, 'cn-mobile': 2, 'bank-card': 1 });
    });

    it('blocks on a hosted tool’s code when the policy says so: the stream ends incomplete and nothing of the address goes out', async () => {
      const account = await createAccount(gateway.t);
      const key = (await createKey(gateway.t, account.token, { model_scope: ['g-gpt'] })).api_key;
      expect((await api(gateway.t, 'PUT', '/api/v1/account/guardrails/email', account.token, { policy: 'block' })).status).to.equal(200);
      gateway.responses.script({ rawEvents: events });
      const { status, raw } = await gateway.post('/v1/responses', { model: 'g-gpt', input: 'send it', stream: true }, key);
      expect(status).to.equal(200);
      expect(raw).not.to.contain(EMAIL);
      expect(raw).not.to.contain('li.le');
      const last = parseSse(raw).at(-1)!;
      expect(last.event).to.equal('response.incomplete');
      expect(last.data.response.incomplete_details).to.deep.equal({ reason: 'content_filter' });
    });

    it('masks a hosted tool’s item in a plain (non-streamed) reply', async () => {
      gateway.responses.script({ rawBody: { ...completed.response, id: 'resp_plain' } });
      const response = await post('/v1/responses', { model: 'g-gpt', input: 'send it' });
      expect(response.status, response.raw).to.equal(200);
      neverRaw(response.raw);
      const body = JSON.parse(response.raw);
      expect(body.output[0]).to.deep.include({ code: `import smtplib\nsmtplib.SMTP('mail').sendmail('[REDACTED:email]', ['[REDACTED:email]'], 'key [REDACTED:api-secret]')\n` });
      expect(body.output[1]).to.deep.include({ output: 'queued for [REDACTED:email]' });
      expect(body.output[2].content.map((part: any) => part.text)).to.deep.equal(['Done. Mail [REDACTED:email]', ' if it fails.']);
    });
  });
});
