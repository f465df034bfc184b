// An upstream's rate limit as the official clients meet it (docs/architecture.md §5):
// every deployment of the tier answers 429 `retry-after: 7`, so the caller
// gets 429 in its protocol's shape (the SDKs raise RateLimitError) with a
// retry-after of at least 7 s, and the upstream is not called again within
// those 7 s, not even by the SDKs' own retries: they sleep the retry-after,
// and their retry is the upstream's next call. One model per client form,
// each on its own fake upstream and deployment, run side by side.
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { BUILTIN_PRICES } from '../../src/routing/builtin-catalog';
import { createAccount, createKey, startTestApp, type TestApp } from '../support/app';
import { startFakeAnthropic, startFakeOpenAI, startFakeOpenAIResponses, type FakeUpstream } from '../support/fake-upstreams';
import { expectApiError, PROVIDER_ENV } from './e2e-support';

const RETRY_AFTER_S = 7;

type ClientForm = 'anthropic' | 'chat' | 'responses';
const FORMS: readonly ClientForm[] = ['anthropic', 'chat', 'responses'];

const everyTier = (provider: string, model: string) => {
  const route = [{ provider, model }];
  return { light: route, standard: route, heavy: route, thinking: route };
};

function catalog(upstreams: Record<ClientForm, FakeUpstream>): unknown {
  const provider = (type: string, upstream: FakeUpstream, extra: Record<string, unknown> = {}) => ({
    type,
    base_url: upstream.baseUrl,
    api_key_env: type === 'anthropic' ? 'E2E_ANTHROPIC_KEY' : 'E2E_OPENAI_KEY',
    idle_timeout_ms: 5_000,
    ...extra,
  });
  return {
    currency: 'CNY',
    prices: BUILTIN_PRICES,
    providers: {
      claude: provider('anthropic', upstreams.anthropic),
      gpt: provider('openai', upstreams.chat),
      'gpt-responses': provider('openai', upstreams.responses, { responses: true }),
    },
    models: [
      { name: 'm-anthropic', routes: everyTier('claude', 'claude-limited') },
      { name: 'm-chat', routes: everyTier('gpt', 'gpt-limited') },
      { name: 'm-responses', routes: everyTier('gpt-responses', 'gpt-responses-limited') },
    ],
  };
}

/** What a client saw of each reply it got, and how many calls its upstream had had by then. */
interface Seen {
  status: number;
  retryAfterMs: number;
  upstreamCalls: number;
}

describe('e2e: an upstream rate limit through the official clients', function () {
  this.timeout(30_000);
  let t: TestApp;
  let upstreams: Record<ClientForm, FakeUpstream>;
  let secret: string;

  before(async () => {
    upstreams = { anthropic: await startFakeAnthropic(), chat: await startFakeOpenAI(), responses: await startFakeOpenAIResponses() };
    t = await startTestApp({ catalog: catalog(upstreams), env: PROVIDER_ENV });
    const owner = await createAccount(t);
    secret = (await createKey(t, owner.token, { model_scope: ['m-anthropic', 'm-chat', 'm-responses'] })).api_key;
  });

  after(async () => {
    await t?.close();
    await Promise.all(Object.values(upstreams ?? {}).map((upstream) => upstream.close()));
  });

  /** One call in the form's own client; `maxRetries` undefined leaves the SDK's default (2). */
  function ask(form: ClientForm, options: { maxRetries?: number; fetch?: typeof fetch }): Promise<string> {
    const common = { apiKey: secret, ...options };
    switch (form) {
      case 'anthropic':
        return new Anthropic({ ...common, baseURL: t.baseUrl }).messages
          .create({ model: 'm-anthropic', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] })
          .then((message) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''));
      case 'chat':
        return new OpenAI({ ...common, baseURL: `${t.baseUrl}/v1` }).chat.completions
          .create({ model: 'm-chat', messages: [{ role: 'user', content: 'Say hello.' }] })
          .then((completion) => completion.choices[0]?.message.content ?? '');
      case 'responses':
        return new OpenAI({ ...common, baseURL: `${t.baseUrl}/v1` }).responses
          .create({ model: 'm-responses', input: 'Say hello.', store: false })
          .then((response) => response.output_text);
    }
  }

  /** The form's checks, from the upstream's 429 to the answer after the window. */
  async function limitedThenServed(form: ClientForm): Promise<void> {
    const upstream = upstreams[form];
    upstream.script({ status: 429, error: { message: 'slow down' }, headers: { 'retry-after': String(RETRY_AFTER_S) } }, { text: 'Served after the window.' });

    // A client without retries: the upstream's 429 comes back at once as the SDK's RateLimitError.
    const refused = () => ask(form, { maxRetries: 0 });
    const { error } =
      form === 'anthropic'
        ? await expectApiError(refused, Anthropic.RateLimitError, 429, 'request-id')
        : await expectApiError(refused, OpenAI.RateLimitError, 429, 'x-request-id');
    expect(Number(error.headers?.get('retry-after')), `${form}: retry-after`).to.be.at.least(RETRY_AFTER_S);
    expect(Number(error.headers?.get('retry-after-ms')), `${form}: retry-after-ms`).to.be.at.least(RETRY_AFTER_S * 1000);
    if (error instanceof OpenAI.RateLimitError) expect(error).to.include({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    else expect(error.error).to.have.nested.property('error.type', 'rate_limit_error');
    expect(upstream.requests, `${form}: upstream calls`).to.have.length(1);

    // A client as a user leaves it (two retries): refused within the window without an upstream call,
    // it sleeps what the reply asks, and its retry is the upstream's next call, after the window.
    const seen: Seen[] = [];
    const watching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      seen.push({ status: response.status, retryAfterMs: Number(response.headers.get('retry-after-ms')), upstreamCalls: upstream.requests.length });
      return response;
    };
    expect(await ask(form, { fetch: watching }), form).to.equal('Served after the window.');
    expect(seen.map((reply) => [reply.status, reply.upstreamCalls]), `${form}: replies, upstream calls by then`).to.deep.equal([
      [429, 1],
      [200, 2],
    ]);
    expect(seen[0]!.retryAfterMs, `${form}: what is left of the window`).to.be.within(1, RETRY_AFTER_S * 1000);
    const [limited, next] = upstream.requests;
    expect(next!.receivedAt - limited!.receivedAt, `${form}: ms between the upstream's calls`).to.be.at.least(RETRY_AFTER_S * 1000);
  }

  it('openai chat, openai responses and Anthropic messages each raise RateLimitError with retry-after ≥ 7, and the upstream is not called again within it', async () => {
    await Promise.all(FORMS.map((form) => limitedThenServed(form)));
  });
});
