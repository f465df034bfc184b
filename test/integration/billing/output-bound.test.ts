// Issue 27, deliverable 3: one output bound. A chat body whose max_tokens and
// max_completion_tokens disagree is refused (400 naming max_tokens), so it
// can no longer be admitted on one and run to the other (it ran one call to
// 7.2 CNY on a 1 CNY account). The upstream receives exactly the bound that
// was reserved, in the field(s) its protocol wants and never two that
// disagree: on pass-through every bound field the caller sent, on
// translation one; lower_max_tokens lowers that one bound everywhere it is
// sent.
import { expect } from 'chai';
import { api, createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogFile } from '../../support/data-plane';
import { startFakeAnthropic, startFakeOpenAI, startFakeOpenAIResponses, type FakeUpstream } from '../../support/fake-upstreams';
import { operator } from './billing-support';

const ENV = { BOUND_ANTHROPIC_KEY: 'sk-ant-bound', BOUND_OPENAI_KEY: 'sk-openai-bound' };
const ask = [{ role: 'user', content: 'Write a long story.' }];

describe('billing: one output bound', function () {
  this.timeout(60_000);
  let t: TestApp;
  let anthropic: FakeUpstream;
  let openai: FakeUpstream;
  let responses: FakeUpstream;
  let unlimited: string;
  /** A key of an account set to lower_max_tokens, with room for a few thousand output tokens. */
  let lowering: string;

  const post = async (path: string, key: string, body: Record<string, unknown>) => {
    const response = await fetch(`${t.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null };
  };
  const lastBody = (upstream: FakeUpstream) => upstream.requests.at(-1)!.body;

  before(async () => {
    [anthropic, openai, responses] = await Promise.all([startFakeAnthropic(), startFakeOpenAI(), startFakeOpenAIResponses()]);
    const all = (provider: string) => ({ light: [{ provider, model: 'up' }], standard: [{ provider, model: 'up' }], heavy: [{ provider, model: 'up' }], thinking: [{ provider, model: 'up' }] });
    t = await startTestApp({
      env: ENV,
      catalog: catalogFile({
        providers: {
          claude: { type: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'BOUND_ANTHROPIC_KEY' },
          gpt: { type: 'openai', base_url: openai.baseUrl, api_key_env: 'BOUND_OPENAI_KEY' },
          rsp: { type: 'openai', base_url: responses.baseUrl, api_key_env: 'BOUND_OPENAI_KEY', responses: true },
        },
        models: [
          { name: 'm-claude', routes: all('claude') },
          { name: 'm-gpt', routes: all('gpt') },
          { name: 'm-responses', routes: all('rsp') },
        ],
      }),
    });
    const scope = { model_scope: ['m-claude', 'm-gpt', 'm-responses'] };
    unlimited = (await createKey(t, (await createAccount(t)).token, scope)).api_key;
    const owner = await createAccount(t, { creditLimitMicros: t.app.services.catalog.minimalCallMicros + 40_000 });
    await t.app.services.accounts.setCreditLimit(operator(owner.accountId), undefined, 'lower_max_tokens');
    lowering = (await createKey(t, owner.token, scope)).api_key;
    expect((await api(t, 'GET', '/api/v1/account/credit', owner.token)).body).to.include({ overflow: 'lower_max_tokens', suspended: false });
  });

  after(async () => {
    await t?.close();
    await Promise.all([anthropic?.close(), openai?.close(), responses?.close()]);
  });

  for (const stream of [false, true]) {
    it(`chat${stream ? ' (streamed)' : ''}: max_tokens and max_completion_tokens that differ → 400 naming max_tokens, and nothing reaches the upstream`, async () => {
      const before = openai.requests.length;
      const refused = await post('/v1/chat/completions', unlimited, { model: 'm-gpt', messages: ask, max_completion_tokens: 10, max_tokens: 900_000, stream });
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.error).to.include({ type: 'invalid_request_error', param: 'max_tokens' });
      expect(refused.body.error.message).to.equal('max_tokens (900000) conflicts with max_completion_tokens (10): send one of them, or the same value in both');
      expect(openai.requests.length).to.equal(before);
    });
  }

  it('chat → OpenAI: equal values are one bound, forwarded as sent; lower_max_tokens lowers both to the same value', async () => {
    const same = await post('/v1/chat/completions', unlimited, { model: 'm-gpt', messages: ask, max_completion_tokens: 300, max_tokens: 300 });
    expect(same.status, same.text).to.equal(200);
    expect(lastBody(openai)).to.include({ max_tokens: 300, max_completion_tokens: 300 });

    const lowered = await post('/v1/chat/completions', lowering, { model: 'm-gpt', messages: ask, max_completion_tokens: 200_000, max_tokens: 200_000 });
    expect(lowered.status, lowered.text).to.equal(200);
    const header = lowered.headers.get('x-gateway-max-tokens-lowered');
    expect(header).to.match(/^200000 -> \d+$/);
    const to = Number(header!.split(' -> ')[1]);
    expect(to).to.be.at.least(1_024).and.below(200_000);
    expect(lastBody(openai)).to.include({ max_tokens: to, max_completion_tokens: to });

    // Only the newer field sent: only it carries the bound.
    const newer = await post('/v1/chat/completions', lowering, { model: 'm-gpt', messages: ask, max_completion_tokens: 200_000 });
    expect(newer.status, newer.text).to.equal(200);
    const alone = Number(newer.headers.get('x-gateway-max-tokens-lowered')!.split(' -> ')[1]);
    expect(lastBody(openai)).to.include({ max_completion_tokens: alone }).and.not.have.property('max_tokens');
  });

  it('chat → Anthropic (translated): one max_tokens, the reserved bound', async () => {
    const lowered = await post('/v1/chat/completions', lowering, { model: 'm-claude', messages: ask, max_completion_tokens: 200_000, max_tokens: 200_000 });
    expect(lowered.status, lowered.text).to.equal(200);
    const to = Number(lowered.headers.get('x-gateway-max-tokens-lowered')!.split(' -> ')[1]);
    const sent = lastBody(anthropic);
    expect(sent.max_tokens).to.equal(to);
    expect(sent).to.not.have.property('max_completion_tokens');
  });

  it('Messages → Anthropic and Responses → Responses: the one field, lowered', async () => {
    const messages = await post('/v1/messages', lowering, { model: 'm-claude', messages: ask, max_tokens: 200_000 });
    expect(messages.status, messages.text).to.equal(200);
    expect(lastBody(anthropic).max_tokens).to.equal(Number(messages.headers.get('x-gateway-max-tokens-lowered')!.split(' -> ')[1]));

    const reply = await post('/v1/responses', lowering, { model: 'm-responses', input: 'Write a long story.', max_output_tokens: 200_000 });
    expect(reply.status, reply.text).to.equal(200);
    const to = Number(reply.headers.get('x-gateway-max-tokens-lowered')!.split(' -> ')[1]);
    expect(to).to.be.at.least(1_024).and.below(200_000);
    expect(lastBody(responses)).to.include({ max_output_tokens: to });
  });
});
