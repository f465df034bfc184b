// End to end with the official OpenAI client (`openai`), plus the model list
// and token counting through both official clients: real gateway, real
// PostgreSQL, fake upstreams speaking the real protocols.
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { createAccount, createKey, type TestAccount, type TestApp } from '../support/app';
import type { FakeUpstream } from '../support/fake-upstreams';
import {
  expectApiError,
  KEY_SCOPE,
  MODEL_VIA,
  OPENAI_UNIFY,
  ROUTED_MODEL,
  startE2eGateway,
  usageDetail,
  type E2eGateway,
  type UpstreamKind,
} from './e2e-support';

/** What the client should see for a scripted upstream usage; see anthropic-sdk.test.ts. */
function expectedUsage(kind: UpstreamKind, usage: { input: number; cacheRead: number; output: number }, thinking = false) {
  const factor = kind === 'openai' ? OPENAI_UNIFY : { input: 1, output: 1 };
  const hit = Math.ceil(usage.cacheRead * factor.input);
  const miss = Math.ceil((kind === 'openai' ? usage.input - usage.cacheRead : usage.input) * factor.input);
  const output = Math.ceil(usage.output * factor.output);
  return {
    prompt_tokens: hit + miss,
    completion_tokens: output,
    total_tokens: hit + miss + output,
    prompt_tokens_details: { cached_tokens: hit },
    cached_input_tokens: hit,
    price_tier: thinking ? 'thinking' : 'no_thinking',
    thinking,
  };
}

/** The usage fields this test checks, off an SDK usage object typed without the gateway's extras. */
function chatUsage(usage: unknown) {
  const u = usage as Record<string, unknown>;
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
    prompt_tokens_details: { cached_tokens: (u.prompt_tokens_details as { cached_tokens?: number } | undefined)?.cached_tokens },
    cached_input_tokens: u.cached_input_tokens,
    price_tier: u.price_tier,
    thinking: u.thinking,
  };
}

describe('e2e: official OpenAI client', function () {
  this.timeout(30_000);
  let t: TestApp;
  let fakes: Record<UpstreamKind, FakeUpstream>;
  let gateway: E2eGateway | undefined;
  let owner: TestAccount;
  let keyId: string;
  let secret: string;
  let client: OpenAI;

  const openaiFor = (apiKey: string) => new OpenAI({ baseURL: `${t.baseUrl}/v1`, apiKey, maxRetries: 0 });
  const anthropicFor = (apiKey: string) => new Anthropic({ baseURL: t.baseUrl, apiKey, maxRetries: 0 });

  const ask = (model: string, text = 'Say hello.'): ChatCompletionCreateParamsNonStreaming => ({
    model,
    max_tokens: 256,
    messages: [{ role: 'user', content: text }],
  });

  before(async () => {
    gateway = await startE2eGateway();
    ({ t, fakes } = gateway);
    owner = await createAccount(t);
    const created = await createKey(t, owner.token, { model_scope: KEY_SCOPE });
    keyId = created.api_key_id;
    secret = created.api_key;
    client = openaiFor(secret);
  });

  after(async () => {
    await gateway?.close();
  });

  for (const kind of ['anthropic', 'openai'] as const) {
    describe(`chat.completions against the ${kind} upstream`, () => {
      it('plain: text, finish_reason stop, usage with the gateway extras', async () => {
        const scripted = { input: 40, cacheRead: 16, output: 7 };
        fakes[kind].script({ text: `Plain answer via ${kind}`, usage: scripted });

        const { data: completion, response, request_id } = await client.chat.completions.create(ask(MODEL_VIA[kind])).withResponse();

        expect(completion.object).to.equal('chat.completion');
        expect(completion.id).to.match(/^chatcmpl-/);
        expect(completion.model).to.equal(ROUTED_MODEL[kind]);
        expect(completion.choices).to.have.length(1);
        const [choice] = completion.choices;
        expect(choice?.message.role).to.equal('assistant');
        expect(choice?.message.content).to.equal(`Plain answer via ${kind}`);
        expect(choice?.finish_reason).to.equal('stop');
        expect(chatUsage(completion.usage)).to.deep.equal(expectedUsage(kind, scripted));
        expect(request_id).to.match(/^req_/);
        expect(response.headers.get('x-request-id')).to.equal(request_id);
        expect(response.headers.get('content-type')).to.match(/^application\/json/);

        // Only the provider's key went upstream.
        const sent = fakes[kind].requests.at(-1)!;
        expect(JSON.stringify(sent.headers)).to.not.include(secret);
        expect(sent.rawBody).to.not.include(secret);
      });

      it('stream with include_usage: role first, a finish_reason, a final usage chunk with no choices, then the end', async () => {
        const scripted = { input: 25, cacheRead: 8, output: 12 };
        fakes[kind].script({ chunks: ['Str', 'eamed ', 'via ', kind], usage: scripted, cumulativeDeltaUsage: true });

        const stream = await client.chat.completions.create({ ...ask(MODEL_VIA[kind]), stream: true, stream_options: { include_usage: true } });
        const chunks: ChatCompletionChunk[] = [];
        for await (const chunk of stream) chunks.push(chunk);

        expect(chunks.length).to.be.greaterThan(2);
        expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0]!.id)).to.equal(true);
        expect(chunks[0]!.choices[0]?.delta.role).to.equal('assistant');
        const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
        expect(text).to.equal(`Streamed via ${kind}`);
        const finishing = chunks.findIndex((c) => c.choices[0]?.finish_reason != null);
        expect(finishing).to.be.greaterThan(0);
        expect(chunks[finishing]!.choices[0]!.finish_reason).to.equal('stop');
        const last = chunks.at(-1)!;
        expect(finishing).to.be.lessThan(chunks.length - 1);
        expect(last.choices).to.deep.equal([]);
        expect(chatUsage(last.usage)).to.deep.equal(expectedUsage(kind, scripted));
        // No chunk but the last carries usage.
        expect(chunks.slice(0, -1).every((c) => c.usage == null)).to.equal(true);
      });
    });
  }

  describe('chat.completions: defaults, system prompt, thinking', () => {
    it('a stream without include_usage has no usage chunk and still ends', async () => {
      const stream = await client.chat.completions.create({ ...ask('m-mock'), stream: true });
      const chunks: ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.at(-1)!.choices[0]?.finish_reason).to.equal('stop');
      expect(chunks.every((c) => c.choices.length === 1 && c.usage == null)).to.equal(true);
    });

    it('works without max_tokens (the catalog default goes upstream)', async () => {
      const params: ChatCompletionCreateParamsNonStreaming = { model: 'm-openai', messages: [{ role: 'user', content: 'Say hello.' }] };
      const completion = await client.chat.completions.create(params);
      expect(completion.choices[0]?.finish_reason).to.equal('stop');
      expect(fakes.openai.requests.at(-1)!.body.max_tokens).to.equal(777);

      await client.chat.completions.create({ ...params, model: 'm-anthropic' });
      expect(fakes.anthropic.requests.at(-1)!.body.max_tokens).to.equal(4096);
    });

    it('a system message reaches an Anthropic upstream as the top-level system prompt', async () => {
      await client.chat.completions.create({
        model: 'm-anthropic',
        max_tokens: 100,
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Hello?' },
        ],
      });
      const sent = fakes.anthropic.requests.at(-1)!.body;
      expect(sent.system).to.equal('You are terse.');
      expect(sent.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'Hello?' }] }]);
    });

    it('reasoning_effort high → thinking tier, billed as thinking', async () => {
      for (const kind of ['anthropic', 'openai'] as const) {
        const scripted = { input: 9, cacheRead: 0, output: 30 };
        fakes[kind].script({ thinking: 'Let me think.', text: 'Thought it through.', usage: scripted });
        const completion = await client.chat.completions.create({ ...ask(MODEL_VIA[kind]), max_tokens: 4096, reasoning_effort: 'high' });
        expect(completion.choices[0]?.message.content).to.equal('Thought it through.');
        expect(chatUsage(completion.usage)).to.deep.equal(expectedUsage(kind, scripted, true));
      }
      const detail = await usageDetail(t, owner.token, keyId);
      expect(detail.items.slice(0, 2).map((item) => [item.thinking, item.route_tier, item.tiers['thinking.output']])).to.deep.equal([
        [true, 'thinking', Math.ceil(30 * OPENAI_UNIFY.output)],
        [true, 'thinking', 30],
      ]);
    });
  });

  describe('errors in the OpenAI envelope', () => {
    /** Expects `type`, the status, `x-request-id`, and the `{error:{message,type,param,code}}` body. */
    async function refusal<E extends InstanceType<typeof OpenAI.APIError>>(
      call: () => Promise<unknown>,
      type: abstract new (...args: never[]) => E,
      status: number,
      errorType: string,
    ): Promise<E> {
      const { error, requestId } = await expectApiError(call, type, status, 'x-request-id');
      expect(error.headers?.get('request-id')).to.equal(requestId);
      const body = error.error as Record<string, unknown>;
      expect(Object.keys(body).sort()).to.deep.equal(['code', 'message', 'param', 'type']);
      expect(body.message).to.be.a('string').and.not.equal('');
      expect(body.type).to.equal(errorType);
      expect(error.type).to.equal(errorType);
      return error;
    }

    it('a bad key → AuthenticationError (401)', async () => {
      await refusal(() => openaiFor('tsxt-wrong').chat.completions.create(ask('m-mock')), OpenAI.AuthenticationError, 401, 'authentication_error');
      await refusal(() => openaiFor('tsxt-wrong').models.list(), OpenAI.AuthenticationError, 401, 'authentication_error');
    });

    it('a model outside the key scope → PermissionDeniedError (403)', async () => {
      const error = await refusal(() => client.chat.completions.create(ask('m-extra')), OpenAI.PermissionDeniedError, 403, 'permission_error');
      expect(error.param).to.equal('model');
    });

    it('an unknown model → NotFoundError (404)', async () => {
      await refusal(() => client.chat.completions.create(ask('no-such-model')), OpenAI.NotFoundError, 404, 'not_found_error');
    });

    it('an empty messages array → BadRequestError (400) naming messages', async () => {
      const error = await refusal(
        () => client.chat.completions.create({ model: 'm-mock', messages: [] }),
        OpenAI.BadRequestError,
        400,
        'invalid_request_error',
      );
      expect(error.param).to.equal('messages');
      expect(error.message).to.include('messages');
    });

    it('a stream refused before its first byte is a plain error, not a broken stream', async () => {
      await refusal(
        () => client.chat.completions.create({ ...ask('m-extra'), stream: true }),
        OpenAI.PermissionDeniedError,
        403,
        'permission_error',
      );
    });
  });

  describe('models', () => {
    it('OpenAI models.list() lists only the key scope, in the OpenAI shape', async () => {
      const ids: string[] = [];
      for await (const model of client.models.list()) {
        expect(model.object).to.equal('model');
        expect(model.created).to.be.a('number');
        expect(model.owned_by).to.be.a('string');
        ids.push(model.id);
      }
      expect(ids).to.deep.equal(KEY_SCOPE);
      const one = await client.models.retrieve('m-openai');
      expect(one).to.include({ id: 'm-openai', object: 'model' });
    });

    it('Anthropic models.list() pages with limit 1 and auto-pagination ends with exactly the scope', async () => {
      const created = await createKey(t, owner.token, { model_scope: ['m-openai', 'm-mock', 'm-extra'] });
      const anthropic = anthropicFor(created.api_key);

      const first = await anthropic.models.list({ limit: 1 });
      expect(first.data.map((m) => m.id)).to.deep.equal(['m-openai']);
      expect(first.has_more).to.equal(true);
      expect(first.first_id).to.equal('m-openai');
      expect(first.last_id).to.equal('m-openai');

      const ids: string[] = [];
      for await (const model of anthropic.models.list({ limit: 1 })) {
        expect(model.type).to.equal('model');
        expect(model.display_name).to.be.a('string').and.not.equal('');
        expect(Number.isNaN(Date.parse(model.created_at))).to.equal(false);
        ids.push(model.id);
        if (ids.length > 10) break; // a paging bug would loop forever
      }
      expect(ids).to.deep.equal(['m-openai', 'm-mock', 'm-extra']);

      const all = await anthropic.models.list({ limit: 20 });
      expect(all.data.map((m) => m.id)).to.deep.equal(['m-openai', 'm-mock', 'm-extra']);
      expect(all.has_more).to.equal(false);
    });

    it('Anthropic models.retrieve(id) answers in the Anthropic shape; outside the scope is 404', async () => {
      const anthropic = anthropicFor(secret);
      const model = await anthropic.models.retrieve('m-anthropic');
      expect(model).to.deep.equal({ type: 'model', id: 'm-anthropic', display_name: 'Anthropic via fake', created_at: model.created_at });
      expect(Number.isNaN(Date.parse(model.created_at))).to.equal(false);

      let caught: unknown;
      try {
        await anthropic.models.retrieve('m-extra');
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(Anthropic.NotFoundError);
      const body = (caught as InstanceType<typeof Anthropic.NotFoundError>).error as { type: string; error: { type: string } };
      expect(body.type).to.equal('error');
      expect(body.error.type).to.equal('not_found_error');
    });
  });

  describe('messages.countTokens', () => {
    it('counts input tokens locally where the upstream cannot count: grows with the text, calls no upstream, bills nothing', async () => {
      const anthropic = anthropicFor(secret);
      const before = await usageDetail(t, owner.token, keyId);
      const upstreamCalls = fakes.anthropic.requests.length + fakes.openai.requests.length;

      const short = await anthropic.messages.countTokens({ model: 'm-mock', messages: [{ role: 'user', content: 'Hello there.' }] });
      expect(Object.keys(short)).to.deep.equal(['input_tokens']);
      expect(short.input_tokens).to.be.a('number').and.greaterThan(0);
      const long = await anthropic.messages.countTokens({
        model: 'm-mock',
        system: 'You are a careful assistant.',
        messages: [{ role: 'user', content: 'Hello there. '.repeat(50) }],
      });
      expect(long.input_tokens).to.be.greaterThan(short.input_tokens + 40);
      // The OpenAI-upstream model unifies input ×1.5.
      const unified = await anthropic.messages.countTokens({ model: 'm-openai', messages: [{ role: 'user', content: 'Hello there.' }] });
      expect(unified.input_tokens).to.equal(Math.ceil(short.input_tokens * OPENAI_UNIFY.input));

      let caught: unknown;
      try {
        await anthropic.messages.countTokens({ model: 'm-extra', messages: [{ role: 'user', content: 'Hi' }] });
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(Anthropic.PermissionDeniedError);

      expect(fakes.anthropic.requests.length + fakes.openai.requests.length).to.equal(upstreamCalls);
      const after = await usageDetail(t, owner.token, keyId);
      expect(after.total).to.equal(before.total);
      expect(after.total_amount).to.equal(before.total_amount);
    });
  });
});
