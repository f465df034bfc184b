// Issue 27, deliverable 2: inputs the upstream adds beyond the request body
// (hosted tools' results, files and images fetched by URL or id, stored
// prompts) are in the worst case, in all three forms, so an upstream that
// bills them cannot push an account past its limit. Each case makes calls on
// a small account whose fake upstream reports a large input (150,000 tokens
// for one web search, as in the issue, where the account ended at 6× its
// limit) until the gateway refuses one: the settled month never passes the
// limit. The refusal is of that call alone (its worst case does not fit what
// is left, which still pays for a minimal useful call: the keys stay active)
// or, once what is left cannot, the account's (at its limit).
import { expect } from 'chai';
import { zoneMonth } from '../../../src/domain/zone-time';
import { formatMicros } from '../../../src/core/decimal';
import { api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogFile } from '../../support/data-plane';
import { startFakeAnthropic, startFakeOpenAI, startFakeOpenAIResponses, type FakeUpstream } from '../../support/fake-upstreams';
import { micros } from './billing-support';

/** 1 CNY: two or three calls of the large cases. */
const LIMIT = 1_000_000;
const ENV = { HOSTED_ANTHROPIC_KEY: 'sk-ant-hosted', HOSTED_OPENAI_KEY: 'sk-openai-hosted' };

type Form = 'messages' | 'chat' | 'responses';
const PATHS: Record<Form, string> = { messages: '/v1/messages', chat: '/v1/chat/completions', responses: '/v1/responses' };

interface Case {
  form: Form;
  what: string;
  body: Record<string, unknown>;
  /** Input tokens the fake upstream reports for each call. */
  input: number;
  /** The account's limit in micro-units (default LIMIT): a few calls' cost. */
  limit?: number;
}

const ask = 'What happened in the news today?';
const messagesBody = (extra: Record<string, unknown>) => ({ model: 'm-claude', max_tokens: 256, messages: [{ role: 'user', content: ask }], ...extra });
const chatBody = (extra: Record<string, unknown>) => ({ model: 'm-gpt', max_tokens: 256, messages: [{ role: 'user', content: ask }], ...extra });
const responsesBody = (extra: Record<string, unknown>) => ({ model: 'm-responses', max_output_tokens: 256, input: ask, ...extra });
const userParts = (...parts: unknown[]) => [{ role: 'user', content: [...parts, { type: 'input_text', text: ask }] }];

const CASES: Case[] = [
  { form: 'responses', what: 'web_search', body: responsesBody({ tools: [{ type: 'web_search' }] }), input: 150_000 },
  { form: 'responses', what: 'web_search_preview', body: responsesBody({ tools: [{ type: 'web_search_preview' }] }), input: 150_000 },
  { form: 'responses', what: 'file_search', body: responsesBody({ tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }), input: 150_000 },
  { form: 'responses', what: 'mcp', body: responsesBody({ tools: [{ type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example/sse' }] }), input: 150_000 },
  { form: 'responses', what: 'code_interpreter', body: responsesBody({ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }), input: 90_000 },
  { form: 'responses', what: 'image_generation', body: responsesBody({ tools: [{ type: 'image_generation' }] }), input: 7_000, limit: 60_000 },
  { form: 'responses', what: 'input_file by URL', body: responsesBody({ input: userParts({ type: 'input_file', file_url: 'https://files.example/report.pdf' }) }), input: 250_000 },
  { form: 'responses', what: 'input_file by id', body: responsesBody({ input: userParts({ type: 'input_file', file_id: 'file-abc' }) }), input: 250_000 },
  { form: 'responses', what: 'input_image by file id', body: responsesBody({ input: userParts({ type: 'input_image', file_id: 'file-img' }) }), input: 3_500, limit: 60_000 },
  { form: 'responses', what: 'a stored prompt', body: responsesBody({ prompt: { id: 'pmpt_1' } }), input: 90_000 },
  { form: 'chat', what: 'web_search_options', body: chatBody({ web_search_options: { search_context_size: 'high' } }), input: 150_000 },
  {
    form: 'chat',
    what: 'a file by id',
    body: chatBody({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }, { type: 'text', text: ask }] }] }),
    input: 250_000,
  },
  { form: 'messages', what: 'web_search', body: messagesBody({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), input: 150_000 },
  { form: 'messages', what: 'web_fetch', body: messagesBody({ tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }] }), input: 150_000 },
  { form: 'messages', what: 'code_execution', body: messagesBody({ tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] }), input: 90_000 },
  {
    form: 'messages',
    what: 'mcp_servers',
    body: messagesBody({ mcp_servers: [{ type: 'url', url: 'https://mcp.example/sse', name: 'docs' }] }),
    input: 150_000,
  },
  {
    form: 'messages',
    what: 'container_upload',
    body: messagesBody({ messages: [{ role: 'user', content: [{ type: 'container_upload', file_id: 'file_1' }, { type: 'text', text: ask }] }] }),
    input: 250_000,
  },
  {
    form: 'messages',
    what: 'a document by URL',
    body: messagesBody({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://files.example/a.pdf' } }, { type: 'text', text: ask }] }] }),
    input: 250_000,
  },
];

describe('billing: what hosted tools and references add is reserved, in every form', function () {
  this.timeout(120_000);
  let t: TestApp;
  let anthropic: FakeUpstream;
  let openai: FakeUpstream;
  let responses: FakeUpstream;
  const upstreamOf = (form: Form): FakeUpstream => ({ messages: anthropic, chat: openai, responses })[form];

  before(async () => {
    [anthropic, openai, responses] = await Promise.all([startFakeAnthropic(), startFakeOpenAI(), startFakeOpenAIResponses()]);
    const all = (provider: string, model: string) => ({ light: [{ provider, model }], standard: [{ provider, model }], heavy: [{ provider, model }], thinking: [{ provider, model }] });
    t = await startTestApp({
      env: ENV,
      catalog: catalogFile({
        providers: {
          claude: { type: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'HOSTED_ANTHROPIC_KEY' },
          gpt: { type: 'openai', base_url: openai.baseUrl, api_key_env: 'HOSTED_OPENAI_KEY' },
          rsp: { type: 'openai', base_url: responses.baseUrl, api_key_env: 'HOSTED_OPENAI_KEY', responses: true },
        },
        models: [
          { name: 'm-claude', routes: all('claude', 'claude-up') },
          { name: 'm-gpt', routes: all('gpt', 'gpt-up') },
          { name: 'm-responses', routes: all('rsp', 'gpt-up') },
        ],
      }),
    });
  });

  after(async () => {
    await t?.close();
    await Promise.all([anthropic?.close(), openai?.close(), responses?.close()]);
  });

  for (const c of CASES) {
    it(`${c.form}: ${c.what} reported as ${c.input.toLocaleString('en')} input tokens never settles past the limit`, async () => {
      const limit = c.limit ?? LIMIT;
      const owner = await createAccount(t, { timezone: 'UTC', creditLimitMicros: limit });
      const key = await createKey(t, owner.token, { model_scope: ['m-claude', 'm-gpt', 'm-responses'] });
      const upstream = upstreamOf(c.form);
      const reached = upstream.requests.length;
      let answered = 0;
      let refusal: any;
      for (let i = 0; i < 10 && refusal === undefined; i++) {
        upstream.unscript();
        upstream.script({ usage: { input: c.input, output: 20 } });
        const response = await fetch(`${t.baseUrl}${PATHS[c.form]}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify(c.body),
        });
        const body: any = await response.json();
        if (response.status === 429) refusal = { body, retry: response.headers.get('x-should-retry') };
        else {
          expect(response.status, JSON.stringify(body)).to.equal(200);
          answered++;
        }
        const used = micros((await api(t, 'GET', '/api/v1/account/credit', owner.token)).body.month_used);
        expect(used <= BigInt(limit), `settled ${formatMicros(used)} CNY after call ${i + 1}, past the ${formatMicros(limit)} CNY limit`).to.equal(true);
      }
      upstream.unscript();
      expect(answered, 'calls that fit were answered').to.be.at.least(1);
      expect(upstream.requests.length - reached, 'every answered call reached the upstream, the refused one did not').to.equal(answered);
      expect(refusal, 'a call was refused before the limit').to.not.equal(undefined);
      expect(refusal.retry).to.equal('false');
      const view = (await api(t, 'GET', '/api/v1/account/credit', owner.token)).body;
      expect(view.month).to.equal(zoneMonth('UTC'));
      // What the upstream billed is what was settled: the reported input at the miss price (2) and 20 output tokens (8).
      expect(micros(view.month_used)).to.equal(BigInt(answered * (2 * c.input + 8 * 20)));
      const message: string = refusal.body.error.message;
      const left = micros(view.remaining);
      if (left < BigInt(t.app.services.catalog.minimalCallMicros)) {
        // What is left cannot pay for a minimal useful call: the account is at its limit.
        expect(view.suspended).to.equal(true);
        expect(message).to.match(/all its keys are suspended/);
        return;
      }
      // Refused on its own: its worst case does not fit what is left, and the keys stay usable.
      expect(view.suspended).to.equal(false);
      const match = /worst case \(([\d.]+) CNY.*exceeds the ([\d.]+) CNY not yet used or reserved/.exec(message);
      expect(match, message).to.not.equal(null);
      expect(micros(match![2]!)).to.equal(left);
      expect(micros(match![1]!) > left).to.equal(true);
    });
  }
});
