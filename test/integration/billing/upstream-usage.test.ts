// Usage an upstream does not send is counted, not billed 0 (issue 27,
// docs/architecture.md §10): an OpenAI-compatible server that answers without `usage`
// (several self-hosted ones do) is billed the input it was sent and the
// output it produced, counted locally and marked `estimated`, status ok.
// OpenAI-protocol upstreams are always asked for usage in streams; a chat
// caller gets the usage chunk only if it asked. And every view of the usage
// says which records are estimated.
import { expect } from 'chai';
import { api } from '../../support/app';
import { parseSse } from '../../support/sse-client';
import { countTokens } from '../../../src/tokenizer';
import { zoneDay } from './billing-support';
import {
  formBody,
  GPT_INPUT_UNIFY,
  MODEL,
  post,
  prose,
  readThenHangUp,
  recordOfKey,
  recordsOfKey,
  startBillingGateway,
  type BillingGateway,
  type Form,
} from './upstream-billing-support';

const ANSWER = 'Forty-two invoices were settled in November, all of them on time.';
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-nousage',
  object: 'chat.completion.chunk',
  created: 1_727_346_173,
  model: 'gpt-up',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});
/** A stream that ends without a usage chunk, though the gateway asked for one. */
const CHUNKS_WITHOUT_USAGE = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Forty-two invoices were settled ' }), chunk({ content: 'in November, all of them on time.' }), chunk({}, 'stop')];
const COMPLETION_WITHOUT_USAGE = {
  id: 'chatcmpl-nousage',
  object: 'chat.completion',
  created: 1_727_346_173,
  model: 'gpt-up',
  choices: [{ index: 0, message: { role: 'assistant', content: ANSWER, refusal: null }, logprobs: null, finish_reason: 'stop' }],
};
const RESPONSE_WITHOUT_USAGE = {
  id: 'resp_nousage',
  object: 'response',
  created_at: 1_727_346_173,
  status: 'completed',
  error: null,
  incomplete_details: null,
  model: 'gpt-resp-up',
  output: [{ id: 'msg_nousage', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: ANSWER, annotations: [] }] }],
  usage: null,
};

/** The usage a client saw, in each form: [input, output]. */
function seenUsage(form: Form, stream: boolean, text: string): [number, number] {
  if (!stream) {
    const body = JSON.parse(text);
    if (form === 'chat') return [body.usage.prompt_tokens, body.usage.completion_tokens];
    return [body.usage.input_tokens, body.usage.output_tokens];
  }
  const events = parseSse(text).map((e) => e.data);
  if (form === 'messages') {
    const delta = events.findLast((e) => e?.type === 'message_delta');
    return [delta.usage.input_tokens, delta.usage.output_tokens];
  }
  if (form === 'chat') {
    const last = events.findLast((e) => e?.usage);
    return [last.usage.prompt_tokens, last.usage.completion_tokens];
  }
  const completed = events.findLast((e) => e?.type === 'response.completed');
  return [completed.response.usage.input_tokens, completed.response.usage.output_tokens];
}

describe('billing: usage an upstream does not send', function () {
  this.timeout(120_000);
  let g: BillingGateway;
  let serial = 0;

  before(async () => {
    g = await startBillingGateway();
  });
  after(async () => g?.close());

  describe('an OpenAI-compatible upstream that reports none is billed by a local count, status ok', () => {
    const cases: Array<{ name: string; form: Form; model: string; stream: boolean; script: () => void; factor: number }> = [
      { name: 'chat, plain JSON without usage', form: 'chat', model: MODEL.openai, stream: false, factor: GPT_INPUT_UNIFY, script: () => g.fakes.openai.script({ rawBody: COMPLETION_WITHOUT_USAGE }) },
      {
        name: 'chat, a stream without the usage chunk it was asked for',
        form: 'chat',
        model: MODEL.openai,
        stream: true,
        factor: GPT_INPUT_UNIFY,
        script: () => g.fakes.openai.script({ rawEvents: CHUNKS_WITHOUT_USAGE }),
      },
      {
        name: 'messages, translated, a stream without usage',
        form: 'messages',
        model: MODEL.openai,
        stream: true,
        factor: GPT_INPUT_UNIFY,
        script: () => g.fakes.openai.script({ rawEvents: CHUNKS_WITHOUT_USAGE }),
      },
      { name: 'responses, a Responses API reply with usage null', form: 'responses', model: MODEL.responses, stream: false, factor: 1, script: () => g.fakes.responses.script({ rawBody: RESPONSE_WITHOUT_USAGE }) },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const key = await g.key();
        const prompt = prose(`No usage case ${++serial}:`, 120);
        c.script();
        const extra = c.form === 'chat' && c.stream ? { stream_options: { include_usage: true } } : {};
        const response = await post(g, c.form, key.secret, formBody(c.form, c.model, prompt, c.stream, extra));
        const text = await response.text();
        expect(response.status, text).to.equal(200);
        expect(text, text).to.include('time.');

        const record = await recordOfKey(key.id);
        expect(record).to.include({ status: 'ok', estimated: true });
        expect(record.raw_input_cache_miss, 'the prompt as sent').to.be.within(countTokens(prompt), countTokens(prompt) + 40);
        expect(record.raw_output, 'the answer as produced').to.equal(countTokens(ANSWER));
        expect(Number(record.tokens_input_cache_miss)).to.equal(Math.ceil(record.raw_input_cache_miss * c.factor));
        // The client is told the same numbers the record bills.
        expect(seenUsage(c.form, c.stream, text)).to.deep.equal([Number(record.tokens_input_cache_miss), Number(record.tokens_output)]);
      });
    }

    it('a usage chunk with only the output: the output as reported, the input counted', async () => {
      const key = await g.key();
      const prompt = prose('Half usage:', 120);
      g.fakes.openai.script({ rawEvents: [...CHUNKS_WITHOUT_USAGE, { ...chunk({}), choices: [], usage: { completion_tokens: 15 } }] });
      const response = await post(g, 'chat', key.secret, formBody('chat', MODEL.openai, prompt, true));
      expect(response.status).to.equal(200);
      await response.text();
      const record = await recordOfKey(key.id);
      expect(record).to.include({ status: 'ok', estimated: true, raw_output: 15 });
      expect(record.raw_input_cache_miss, 'not billed 0').to.be.within(countTokens(prompt), countTokens(prompt) + 40);
    });

    it('an upstream that reports its usage is billed its figures, not estimated', async () => {
      const key = await g.key();
      g.fakes.openai.script({ usage: { input: 321, output: 12 } });
      const response = await post(g, 'chat', key.secret, formBody('chat', MODEL.openai, prose('Reported usage:', 50), false));
      expect(response.status).to.equal(200);
      const record = await recordOfKey(key.id);
      expect(record).to.include({ status: 'ok', estimated: false, raw_input_cache_miss: 321, raw_output: 12 });
    });
  });

  describe('OpenAI-protocol upstreams are always asked for usage in streams; a chat caller gets it only if it asked', () => {
    const usageChunks = (text: string) => parseSse(text).filter((e) => e.data && typeof e.data === 'object' && 'usage' in e.data);
    const asked = () => g.fakes.openai.requests.at(-1)!.body;

    for (const [name, options, relayed] of [
      ['without stream_options', {}, false],
      ['with include_usage: false', { stream_options: { include_usage: false } }, false],
      ['with include_usage: true', { stream_options: { include_usage: true } }, true],
    ] as const) {
      it(`chat passed through ${name}: asked upstream, ${relayed ? 'relayed' : 'not relayed'}`, async () => {
        const key = await g.key();
        const response = await post(g, 'chat', key.secret, formBody('chat', MODEL.openai, 'Say hi.', true, options));
        const text = await response.text();
        expect(asked().stream_options).to.include({ include_usage: true });
        const chunks = usageChunks(text);
        if (relayed) {
          expect(chunks).to.have.length(1);
          expect(chunks[0]!.data.choices).to.deep.equal([]);
        } else expect(chunks).to.deep.equal([]);
        expect(text.trimEnd().endsWith('data: [DONE]')).to.equal(true);
        expect((await recordOfKey(key.id)).estimated, 'the usage came, so nothing is estimated').to.equal(false);
      });
    }

    for (const form of ['messages', 'responses'] as const) {
      it(`${form} translated to chat completions: asked upstream`, async () => {
        const key = await g.key();
        const response = await post(g, form, key.secret, formBody(form, MODEL.openai, 'Say hi.', true));
        expect(response.status).to.equal(200);
        await response.text();
        expect(asked().stream_options).to.deep.equal({ include_usage: true });
        expect((await recordOfKey(key.id)).estimated).to.equal(false);
      });
    }

    it('a plain call sends no stream_options (OpenAI refuses them without a stream)', async () => {
      const key = await g.key();
      const response = await post(g, 'chat', key.secret, formBody('chat', MODEL.openai, 'Say hi.', false));
      expect(response.status).to.equal(200);
      expect(asked()).to.not.have.property('stream_options');
    });
  });

  it('the usage detail, the CSV export and GraphQL say which records are estimated', async () => {
    const key = await g.key();
    // One call billed from the upstream's figures, one cut mid-stream (its input estimated).
    const plain = await post(g, 'chat', key.secret, formBody('chat', MODEL.openai, 'Say hi.', false));
    expect(plain.status).to.equal(200);
    const exact = plain.headers.get('x-request-id');
    g.fakes.openai.script({ chunks: ['One ', 'two ', 'three.'], hangAfterEvents: 2 });
    const controller = new AbortController();
    const streamed = await post(g, 'chat', key.secret, formBody('chat', MODEL.openai, 'Count to three.', true), controller.signal);
    const estimated = streamed.headers.get('x-request-id');
    await readThenHangUp(streamed, controller, (text) => /"content":"[^"]/.test(text));
    const day = zoneDay('UTC');
    const token = g.owner.token;
    // The aborted call's record is committed as the gateway notices the hang-up.
    await recordsOfKey(key.id, 2);
    const detail = await api(g.t, 'GET', `/api/v1/usage?start=${day}&end=${day}&api_key_id=${key.id}`, token);
    const byId = Object.fromEntries(detail.body.items.map((item: { request_id: string; estimated: boolean }) => [item.request_id, item.estimated]));
    expect(byId).to.deep.equal({ [exact!]: false, [estimated!]: true });

    const csv = await api(g.t, 'GET', `/api/v1/usage/export?start=${day}&end=${day}&api_key_id=${key.id}`, token);
    const [header, ...rows] = (csv.body as string).trim().split('\n').map((line) => line.split(','));
    // Columns added later come last: `estimated`, then `response_id`.
    expect(header!.slice(-2)).to.deep.equal(['estimated', 'response_id']);
    const column = header!.indexOf('estimated');
    expect(Object.fromEntries(rows.map((row) => [row[0], row[column]]))).to.deep.equal({ [exact!]: 'false', [estimated!]: 'true' });

    const graphql = await api(g.t, 'POST', '/graphql', token, {
      query: 'query($key: ID!, $day: String!) { usageRecords(apiKeyId: $key, start: $day, end: $day) { items { requestId estimated } } }',
      variables: { key: key.id, day },
    });
    expect(graphql.body.errors, JSON.stringify(graphql.body.errors)).to.equal(undefined);
    const items = graphql.body.data.usageRecords.items as Array<{ requestId: string; estimated: boolean }>;
    expect(Object.fromEntries(items.map((item) => [item.requestId, item.estimated]))).to.deep.equal({ [exact!]: false, [estimated!]: true });
  });
});
