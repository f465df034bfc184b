// End to end with the official Anthropic client (`@anthropic-ai/sdk`): real
// gateway, real PostgreSQL, fake upstreams speaking the real protocols. The
// client must not be able to tell which upstream protocol answered.
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'chai';
import { encode } from 'gpt-tokenizer';
import { BUILTIN_PRICES } from '../../src/routing/builtin-catalog';
import { api, createAccount, createKey, type TestAccount, type TestApp } from '../support/app';
import type { FakeReply, FakeUpstream } from '../support/fake-upstreams';
import {
  eventually,
  expectApiError,
  gatewayUsage,
  KEY_SCOPE,
  keyUsage,
  micros,
  MODEL_VIA,
  OPENAI_UNIFY,
  PROVIDER_ENV,
  ROUTED_MODEL,
  startE2eGateway,
  usageDetail,
  type E2eGateway,
  type GatewayUsage,
  type UpstreamKind,
} from './e2e-support';

/**
 * What the client should see for a scripted upstream usage (docs/architecture.md §7):
 * Anthropic `input` is the uncached part, OpenAI `prompt_tokens` includes the
 * cached part; the OpenAI deployment unifies input ×1.5 and output ×2.
 */
function expectedUsage(kind: UpstreamKind, usage: { input: number; cacheRead: number; output: number }, thinking = false): GatewayUsage {
  if (kind === 'anthropic') {
    return {
      input_tokens: usage.input + usage.cacheRead,
      output_tokens: usage.output,
      cached_input_tokens: usage.cacheRead,
      price_tier: thinking ? 'thinking' : 'no_thinking',
      thinking,
    };
  }
  const hit = Math.ceil(usage.cacheRead * OPENAI_UNIFY.input);
  const miss = Math.ceil((usage.input - usage.cacheRead) * OPENAI_UNIFY.input);
  return {
    input_tokens: hit + miss,
    output_tokens: Math.ceil(usage.output * OPENAI_UNIFY.output),
    cached_input_tokens: hit,
    price_tier: thinking ? 'thinking' : 'no_thinking',
    thinking,
  };
}

describe('e2e: official Anthropic client', function () {
  this.timeout(30_000);
  let t: TestApp;
  let fakes: Record<UpstreamKind, FakeUpstream>;
  let gateway: E2eGateway | undefined;
  let owner: TestAccount;
  const secrets: string[] = [];

  const clientFor = (secret: string) => new Anthropic({ baseURL: t.baseUrl, apiKey: secret, maxRetries: 0 });

  async function newKey(overrides: Record<string, unknown> = {}): Promise<{ id: string; secret: string; client: Anthropic }> {
    const created = await createKey(t, owner.token, { model_scope: KEY_SCOPE, ...overrides });
    secrets.push(created.api_key);
    return { id: created.api_key_id, secret: created.api_key, client: clientFor(created.api_key) };
  }

  const ask = (model: string, text = 'Say hello.'): MessageCreateParamsNonStreaming => ({
    model,
    max_tokens: 256,
    messages: [{ role: 'user', content: text }],
  });

  before(async () => {
    gateway = await startE2eGateway();
    ({ t, fakes } = gateway);
    owner = await createAccount(t);
  });

  after(async () => {
    await gateway?.close();
  });

  /** Every upstream request carried only the provider's key, never a gateway secret. */
  function assertOnlyProviderKeys(): void {
    for (const kind of ['anthropic', 'openai'] as const) {
      for (const request of fakes[kind].requests) {
        const headerText = JSON.stringify(request.headers);
        for (const secret of secrets) {
          expect(headerText).to.not.include(secret);
          expect(request.rawBody).to.not.include(secret);
        }
        if (kind === 'anthropic') {
          expect(request.headers['x-api-key']).to.equal(PROVIDER_ENV.E2E_ANTHROPIC_KEY);
          expect(request.headers).to.not.have.property('authorization');
        } else {
          expect(request.headers.authorization).to.equal(`Bearer ${PROVIDER_ENV.E2E_OPENAI_KEY}`);
          expect(request.headers).to.not.have.property('x-api-key');
        }
      }
    }
  }

  for (const kind of ['anthropic', 'openai'] as const) {
    describe(`${kind} upstream`, () => {
      it('messages.create returns the upstream text and the extended usage', async () => {
        const { client } = await newKey();
        const scripted = { input: 30, cacheRead: 10, output: 5 };
        fakes[kind].script({ text: `Bonjour from the ${kind} fake`, usage: scripted });
        const before = fakes[kind].requests.length;

        const { data: message, response, request_id } = await client.messages.create(ask(MODEL_VIA[kind])).withResponse();

        expect(message.type).to.equal('message');
        expect(message.role).to.equal('assistant');
        expect(message.model).to.equal(ROUTED_MODEL[kind]);
        expect(message.stop_reason).to.equal('end_turn');
        expect(message.content).to.have.length(1);
        const [block] = message.content;
        expect(block?.type === 'text' ? block.text : null).to.equal(`Bonjour from the ${kind} fake`);
        expect(gatewayUsage(message.usage)).to.deep.equal(expectedUsage(kind, scripted));
        // Nothing a client adds on top of input_tokens (which already counts the cached part).
        expect(message.usage).to.not.have.any.keys('cache_read_input_tokens', 'cache_creation_input_tokens');
        expect(response.headers.get('content-type')).to.match(/^application\/json/);
        expect(request_id).to.match(/^req_/);
        expect(response.headers.get('request-id')).to.equal(request_id);
        expect(response.headers.get('x-route')).to.match(/tier=\w+/);

        expect(fakes[kind].requests.length).to.equal(before + 1);
        const sent = fakes[kind].requests.at(-1)!;
        expect(sent.body.model).to.equal(ROUTED_MODEL[kind]);
        assertOnlyProviderKeys();
      });

      it('messages.stream gives the same text and the final usage, extras included', async () => {
        const { client } = await newKey();
        const scripted = { input: 21, cacheRead: 4, output: 9 };
        fakes[kind].script({ text: `Streamed words from the ${kind} fake`, usage: scripted, cumulativeDeltaUsage: kind === 'anthropic' });
        const expected = expectedUsage(kind, scripted);

        const stream = client.messages.stream(ask(MODEL_VIA[kind]));
        let streamedText = '';
        const eventTypes: string[] = [];
        let deltaUsage: unknown;
        stream.on('text', (delta) => {
          streamedText += delta;
        });
        stream.on('streamEvent', (event) => {
          eventTypes.push(event.type);
          if (event.type === 'message_delta') deltaUsage = event.usage;
        });
        const final = await stream.finalMessage();

        expect(streamedText).to.equal(`Streamed words from the ${kind} fake`);
        const [block] = final.content;
        expect(block?.type === 'text' ? block.text : null).to.equal(streamedText);
        expect(final.model).to.equal(ROUTED_MODEL[kind]);
        expect(final.stop_reason).to.equal('end_turn');
        expect(eventTypes[0]).to.equal('message_start');
        expect(eventTypes.slice(-2)).to.deep.equal(['message_delta', 'message_stop']);
        // message_delta carries the whole cumulative usage, extras included.
        expect(gatewayUsage(deltaUsage)).to.deep.equal(expected);
        // The client's final message: input/output from message_delta (overwrite),
        // price_tier, thinking and the cached count from message_start; nothing
        // it would add on top of input_tokens.
        const usage = gatewayUsage(final.usage);
        expect({ ...usage, cached_input_tokens: 0 }).to.deep.equal({ ...expected, cached_input_tokens: 0 });
        expect(final.usage.cache_read_input_tokens ?? null).to.equal(null);
        expect(final.usage.cache_creation_input_tokens ?? null).to.equal(null);
        if (kind === 'anthropic') {
          // The upstream reported its cache hits up front, so message_start had them too.
          expect(usage.cached_input_tokens).to.equal(expected.cached_input_tokens);
        }
        expect(stream.request_id).to.match(/^req_/);
        const { response } = await stream.withResponse();
        expect(response.headers.get('request-id')).to.equal(stream.request_id);
        expect(response.headers.get('content-type')).to.match(/^text\/event-stream/);
        assertOnlyProviderKeys();
      });
    });
  }

  describe('older clients', () => {
    it('accept x-api-key, anthropic-version 2023-06-01 and ?beta=true', async () => {
      const { secret } = await newKey();
      const response = await fetch(`${t.baseUrl}/v1/messages?beta=true`, {
        method: 'POST',
        headers: { 'x-api-key': secret, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify(ask('m-mock')),
      });
      expect(response.status).to.equal(200);
      expect(response.headers.get('request-id')).to.match(/^req_/);
      const body = (await response.json()) as { type: string; usage: Record<string, unknown> };
      expect(body.type).to.equal('message');
      expect(body.usage).to.include.keys('input_tokens', 'output_tokens', 'cached_input_tokens', 'price_tier', 'thinking');
    });
  });

  describe('errors, in the classes the client knows', () => {
    let key: { id: string; secret: string; client: Anthropic };
    before(async () => {
      key = await newKey();
    });

    /** Runs `call`, expects it to throw `type`, checks the status, request-id header and body. */
    async function refusal<E extends InstanceType<typeof Anthropic.APIError>>(
      call: () => Promise<unknown>,
      type: abstract new (...args: never[]) => E,
      status: number,
    ): Promise<E> {
      const { error, requestId } = await expectApiError(call, type, status, 'request-id');
      const body = error.error as { type?: string; request_id?: string; error?: { type?: string; message?: string } };
      expect(body.type).to.equal('error');
      expect(body.request_id).to.equal(requestId);
      expect(body.error?.message).to.be.a('string').and.not.equal('');
      return error;
    }

    it('missing max_tokens → BadRequestError (400) naming max_tokens', async () => {
      const params = { model: 'm-anthropic', messages: [{ role: 'user', content: 'Hi' }] } as unknown as MessageCreateParamsNonStreaming;
      const error = await refusal(() => key.client.messages.create(params), Anthropic.BadRequestError, 400);
      expect(error.message).to.include('max_tokens');
      expect((error.error as { error: { type: string } }).error.type).to.equal('invalid_request_error');
    });

    it('a bad key → AuthenticationError (401)', async () => {
      await refusal(() => clientFor('tsxt-not-a-real-key').messages.create(ask('m-anthropic')), Anthropic.AuthenticationError, 401);
      // Well-formed prefix, wrong checksum/unknown: still 401.
      const forged = key.secret.slice(0, -3) + (key.secret.endsWith('aaa') ? 'bbb' : 'aaa');
      await refusal(() => clientFor(forged).messages.create(ask('m-anthropic')), Anthropic.AuthenticationError, 401);
    });

    it('a model outside the key scope → PermissionDeniedError (403)', async () => {
      const error = await refusal(() => key.client.messages.create(ask('m-extra')), Anthropic.PermissionDeniedError, 403);
      expect((error.error as { error: { type: string } }).error.type).to.equal('permission_error');
    });

    it('an unknown model → NotFoundError (404)', async () => {
      const error = await refusal(() => key.client.messages.create(ask('no-such-model')), Anthropic.NotFoundError, 404);
      expect((error.error as { error: { type: string } }).error.type).to.equal('not_found_error');
    });

    it('suspend → 403 at once, resume → accepted, cancel → 401, without restart', async () => {
      const target = await newKey();
      await target.client.messages.create(ask('m-mock'));

      const suspended = await api(t, 'POST', `/api/v1/keys/${target.id}/suspend`, owner.token);
      expect(suspended.status).to.equal(200);
      const error = await refusal(() => target.client.messages.create(ask('m-mock')), Anthropic.PermissionDeniedError, 403);
      expect((error.error as { error: { type: string } }).error.type).to.equal('permission_error');
      // Streams are refused the same way, before any event.
      await refusal(() => target.client.messages.stream(ask('m-mock')).finalMessage(), Anthropic.PermissionDeniedError, 403);

      const resumed = await api(t, 'POST', `/api/v1/keys/${target.id}/resume`, owner.token);
      expect(resumed.status).to.equal(200);
      const message = await target.client.messages.create(ask('m-mock'));
      expect(message.content[0]?.type).to.equal('text');

      const cancelled = await api(t, 'DELETE', `/api/v1/keys/${target.id}`, owner.token);
      expect(cancelled.status).to.equal(200);
      await refusal(() => target.client.messages.create(ask('m-mock')), Anthropic.AuthenticationError, 401);
      // Other keys are unaffected.
      await key.client.messages.create(ask('m-mock'));
    });
  });

  describe('metering', () => {
    it('per-key usage equals the usage the client saw, and agrees with the usage detail to the micro-unit', async () => {
      const { id, client } = await newKey();
      const seen: GatewayUsage[] = [];
      const replies: FakeReply[] = [
        { text: 'one', usage: { input: 13, cacheRead: 3, output: 7 } },
        { text: 'two words', usage: { input: 50, cacheRead: 0, output: 11 } },
        { text: 'three little words', usage: { input: 7, cacheRead: 5, output: 3 } },
      ];
      for (const kind of ['anthropic', 'openai'] as const) {
        fakes[kind].script(...replies);
        // A plain call, a streamed one, and one that asks for thinking (which forces the thinking tier).
        seen.push(gatewayUsage((await client.messages.create(ask(MODEL_VIA[kind], 'plain call'))).usage));
        seen.push(gatewayUsage((await client.messages.stream(ask(MODEL_VIA[kind], 'streamed call')).finalMessage()).usage));
        const thought = await client.messages.create({
          ...ask(MODEL_VIA[kind], 'think first'),
          max_tokens: 2048,
          thinking: { type: 'enabled', budget_tokens: 1024 },
        });
        seen.push(gatewayUsage(thought.usage));
      }
      // And one answered by the built-in mock provider.
      seen.push(gatewayUsage((await client.messages.create(ask('m-mock', 'What is the capital of France?'))).usage));
      expect(seen.filter((u) => u.thinking && u.price_tier === 'thinking')).to.have.length(2);
      expect(seen.filter((u) => !u.thinking && u.price_tier === 'no_thinking')).to.have.length(5);

      // Per tier: the tokens the client saw, and the amount billed call by call
      // (tokens × price, rounded half up to a micro-unit once per call and tier).
      const tokens: Record<string, number> = {};
      const amounts: Record<string, bigint> = {};
      const add = (tier: string, n: number) => {
        tokens[tier] = (tokens[tier] ?? 0) + n;
        const tenths = micros(BUILTIN_PRICES[tier as keyof typeof BUILTIN_PRICES]) / 100_000n; // these prices have one decimal
        amounts[tier] = (amounts[tier] ?? 0n) + (2n * BigInt(n) * tenths + 10n) / 20n;
      };
      for (const u of seen) {
        add(`${u.price_tier}.input_cache_hit`, u.cached_input_tokens);
        add(`${u.price_tier}.input_cache_miss`, u.input_tokens - u.cached_input_tokens);
        add(`${u.price_tier}.output`, u.output_tokens);
      }

      const usage = await keyUsage(t, owner.token, id);
      expect(usage.calls).to.equal(seen.length);
      expect(usage.currency).to.equal('CNY');
      expect(usage.tiers.map((line) => line.tier)).to.deep.equal(Object.keys(BUILTIN_PRICES));
      let totalTokens = 0;
      let totalMicros = 0n;
      for (const line of usage.tiers) {
        expect(line.tokens, line.tier).to.equal(tokens[line.tier] ?? 0);
        expect(line.unit_price).to.equal(BUILTIN_PRICES[line.tier as keyof typeof BUILTIN_PRICES]);
        expect(micros(line.amount), line.tier).to.equal(amounts[line.tier] ?? 0n);
        totalTokens += line.tokens;
        totalMicros += micros(line.amount);
      }
      expect(usage.total_tokens).to.equal(totalTokens);
      expect(micros(usage.total_amount)).to.equal(totalMicros);
      expect(usage.total_tokens).to.equal(seen.reduce((n, u) => n + u.input_tokens + u.output_tokens, 0));

      const detail = await usageDetail(t, owner.token, id);
      expect(detail.total).to.equal(seen.length);
      expect(detail.items).to.have.length(seen.length);
      expect(detail.items.every((item) => item.status === 'ok' && item.api_key_id === id && item.form === 'messages')).to.equal(true);
      expect(detail.total_tokens).to.equal(usage.total_tokens);
      expect(detail.total_amount).to.equal(usage.total_amount);
      expect(detail.items.reduce((n, item) => n + micros(item.amount), 0n)).to.equal(micros(usage.total_amount));
      for (const line of usage.tiers) {
        expect(detail.items.reduce((n, item) => n + (item.tiers[line.tier] ?? 0), 0), line.tier).to.equal(line.tokens);
      }
      // Each item is one call the client saw.
      const itemTotals = detail.items.map((item) => item.total_tokens).sort((a, b) => a - b);
      expect(itemTotals).to.deep.equal(seen.map((u) => u.input_tokens + u.output_tokens).sort((a, b) => a - b));
      expect(detail.items.filter((item) => item.stream)).to.have.length(2);
      assertOnlyProviderKeys();
    });
  });

  describe('client abort', () => {
    it('a stream the client aborts is cancelled upstream and metered as client_aborted', async () => {
      const { id, client } = await newKey();
      // The output guardrails hold back a window of text (docs/architecture.md §6), so the
      // opening chunk is longer than that window: the client then has text in
      // hand while the upstream is still slowly producing the rest (≥ 6 s).
      const opening = 'The quick brown fox jumps over the lazy dog. '.repeat(120);
      const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
      fakes.anthropic.script({ chunks: [opening, ...words], chunkDelayMs: 100, usage: { input: 12, output: 3000 } });
      const before = fakes.anthropic.requests.length;
      const startedAt = Date.now();

      const stream = client.messages.stream(ask('m-anthropic', 'Tell me a long story.'));
      let received = '';
      stream.on('text', (delta) => {
        received += delta;
        stream.abort();
      });
      const outcome = await stream.finalMessage().then(
        () => 'completed',
        (error: unknown) => error,
      );
      expect(outcome).to.be.instanceOf(Anthropic.APIUserAbortError);
      expect(received).to.not.equal('');
      expect(opening.startsWith(received)).to.equal(true);
      const requestId = stream.request_id;
      expect(requestId).to.match(/^req_/);

      const record = await eventually(async () => {
        const detail = await usageDetail(t, owner.token, id);
        return detail.items.find((item) => item.request_id === requestId);
      });
      expect(record.status).to.equal('client_aborted');
      expect(record.stream).to.equal(true);
      expect(record.tiers['no_thinking.input_cache_miss']).to.equal(12);
      const output = record.tiers['no_thinking.output'] ?? 0;
      // What was produced before the cut is billed (at least what reached the client), not the whole answer.
      expect(output).to.be.at.least(encode(received).length);
      expect(output).to.be.at.least(encode(opening).length);
      expect(output).to.be.lessThan(3000);
      expect(micros(record.amount) > 0n, record.amount).to.equal(true);

      // The upstream call was torn down at once rather than left running to its end.
      const upstream = fakes.anthropic.requests[before]!;
      await upstream.ended;
      expect(upstream.closedEarly).to.equal(true);
      expect(Date.now() - startedAt).to.be.lessThan(3000);
    });
  });

  describe('logs, after all of the above', () => {
    it('writes neither key secrets nor the session token to the logs', () => {
      expect(secrets.length).to.be.greaterThan(5);
      const logs = t.logs.join('');
      expect(logs).to.include('request completed');
      for (const secret of secrets) expect(logs).to.not.include(secret);
      expect(logs).to.not.include(owner.token);
      expect(logs).to.not.include(PROVIDER_ENV.E2E_ANTHROPIC_KEY);
      expect(logs).to.not.include(PROVIDER_ENV.E2E_OPENAI_KEY);
    });
  });
});
