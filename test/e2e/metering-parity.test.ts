// Spec §2.4 / docs/architecture.md §7: metering is identical for every protocol form. The
// same random conversation, sent through the official Anthropic client
// (/v1/messages) and the official OpenAI client (/v1/chat/completions and
// /v1/responses) to the same model, must give the same response usage and
// usage records that differ only in `form`, request id and time. The built-in mock provider answers:
// it is deterministic, and a warm-up call puts both measured calls in the same
// prefix-cache state.
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'chai';
import fc from 'fast-check';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { EasyInputMessage, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { UsageItem } from '../../src/metering/usage-query.service';
import { createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../support/app';
import { e2eCatalog, gatewayUsage, usageDetail, type GatewayUsage } from './e2e-support';

interface Conversation {
  system: string | null;
  /** user, assistant, user, … ending with a user turn. */
  turns: string[];
  thinking: boolean;
  stream: boolean;
  /** The order the three forms are called in (after a warm-up). */
  order: Form[];
}

type Form = 'messages' | 'chat' | 'responses';

interface Answer {
  requestId: string;
  text: string;
  usage: GatewayUsage;
}

const MODEL = 'm-mock';

const words = fc.array(
  fc.oneof(
    fc.constantFrom('hello', 'the', 'proof', 'code', 'why', '是', '因为', 'analyse', 'step', '42', 'x²', '🙂', '\n', 'function f() {}'),
    fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' }),
  ),
  { minLength: 1, maxLength: 40 },
);
/** Some text with at least one non-space character. */
const text = words.map((parts) => parts.join(' ')).filter((s) => s.trim() !== '');

const conversation: fc.Arbitrary<Conversation> = fc.record({
  system: fc.option(text, { nil: null }),
  turns: fc.integer({ min: 1, max: 3 }).chain((n) => fc.array(text, { minLength: 2 * n - 1, maxLength: 2 * n - 1 })),
  thinking: fc.boolean(),
  stream: fc.boolean(),
  order: fc.shuffledSubarray<Form>(['messages', 'chat', 'responses'], { minLength: 3, maxLength: 3 }),
});

describe('e2e: metering parity of the three protocol forms (property)', function () {
  this.timeout(120_000);
  let t: TestApp;
  let owner: TestAccount;
  let keyId: string;
  let anthropic: Anthropic;
  let openai: OpenAI;

  before(async () => {
    t = await startTestApp({ catalog: e2eCatalog() });
    owner = await createAccount(t);
    const key = await createKey(t, owner.token, { model_scope: [MODEL] });
    keyId = key.api_key_id;
    anthropic = new Anthropic({ baseURL: t.baseUrl, apiKey: key.api_key, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${t.baseUrl}/v1`, apiKey: key.api_key, maxRetries: 0 });
  });

  after(async () => {
    await t?.close();
  });

  const maxTokens = (c: Conversation) => (c.thinking ? 2048 : 512);

  async function viaMessages(c: Conversation): Promise<Answer> {
    const messages: MessageParam[] = c.turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));
    const params = {
      model: MODEL,
      max_tokens: maxTokens(c),
      messages,
      ...(c.system !== null ? { system: c.system } : {}),
      ...(c.thinking ? { thinking: { type: 'enabled' as const, budget_tokens: 1024 } } : {}),
    };
    if (c.stream) {
      const stream = anthropic.messages.stream(params);
      const message = await stream.finalMessage();
      const textOut = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      return { requestId: stream.request_id ?? '', text: textOut, usage: gatewayUsage(message.usage) };
    }
    const { data: message, request_id } = await anthropic.messages.create(params).withResponse();
    const textOut = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    return { requestId: request_id ?? '', text: textOut, usage: gatewayUsage(message.usage) };
  }

  async function viaChat(c: Conversation): Promise<Answer> {
    const messages: ChatCompletionMessageParam[] = [
      ...(c.system !== null ? [{ role: 'system' as const, content: c.system }] : []),
      ...c.turns.map((content, i): ChatCompletionMessageParam =>
        i % 2 === 0 ? { role: 'user', content } : { role: 'assistant', content },
      ),
    ];
    const params = { model: MODEL, max_tokens: maxTokens(c), messages, ...(c.thinking ? { reasoning_effort: 'high' as const } : {}) };
    const toUsage = (usage: unknown): GatewayUsage => {
      const u = usage as Record<string, unknown>;
      const cached = (u.prompt_tokens_details as { cached_tokens: number }).cached_tokens;
      expect(u.cached_input_tokens).to.equal(cached);
      expect(u.total_tokens).to.equal((u.prompt_tokens as number) + (u.completion_tokens as number));
      return gatewayUsage({ ...u, input_tokens: u.prompt_tokens, output_tokens: u.completion_tokens });
    };
    if (c.stream) {
      const { data: stream, request_id } = await openai.chat.completions
        .create({ ...params, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const chunks: ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const textOut = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      return { requestId: request_id ?? '', text: textOut, usage: toUsage(chunks.at(-1)?.usage) };
    }
    const { data: completion, request_id } = await openai.chat.completions.create(params).withResponse();
    return { requestId: request_id ?? '', text: completion.choices[0]?.message.content ?? '', usage: toUsage(completion.usage) };
  }

  async function viaResponses(c: Conversation): Promise<Answer> {
    const input: EasyInputMessage[] = c.turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));
    const params = {
      model: MODEL,
      input,
      max_output_tokens: maxTokens(c),
      ...(c.system !== null ? { instructions: c.system } : {}),
      ...(c.thinking ? { reasoning: { effort: 'high' as const } } : {}),
    };
    const toUsage = (usage: unknown): GatewayUsage => {
      const u = usage as Record<string, unknown>;
      expect(u.cached_input_tokens).to.equal((u.input_tokens_details as { cached_tokens: number }).cached_tokens);
      expect(u.total_tokens).to.equal((u.input_tokens as number) + (u.output_tokens as number));
      return gatewayUsage(u);
    };
    if (c.stream) {
      const { data: stream, request_id } = await openai.responses.create({ ...params, stream: true }).withResponse();
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const textOut = events.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('');
      const completed = events.at(-1);
      expect(completed?.type).to.equal('response.completed');
      return { requestId: request_id ?? '', text: textOut, usage: toUsage(completed?.type === 'response.completed' ? completed.response.usage : undefined) };
    }
    const { data: response, request_id } = await openai.responses.create(params).withResponse();
    return { requestId: request_id ?? '', text: response.output_text, usage: toUsage(response.usage) };
  }

  const VIA: Record<Form, (c: Conversation) => Promise<Answer>> = { messages: viaMessages, chat: viaChat, responses: viaResponses };

  it('gives identical usage and usage records through /v1/messages, /v1/chat/completions and /v1/responses', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(conversation, async (c) => {
        runs++;
        // Warm-up: afterwards the prompt prefix is in the mock's cache for every measured call alike.
        await viaMessages({ ...c, stream: false });
        const answers = {} as Record<Form, Answer>;
        for (const form of c.order) answers[form] = await VIA[form](c);
        const { messages, chat, responses } = answers;

        expect(chat.usage, 'response usage').to.deep.equal(messages.usage);
        expect(chat.text, 'reply text').to.equal(messages.text);
        expect(responses.usage, 'response usage (responses)').to.deep.equal(messages.usage);
        expect(responses.text, 'reply text (responses)').to.equal(messages.text);
        // An explicit thinking request forces the thinking tier; without one the
        // assessor may still pick it for a reasoning-heavy conversation.
        if (c.thinking) expect(messages.usage.thinking).to.equal(true);
        expect(messages.usage.price_tier).to.equal(messages.usage.thinking ? 'thinking' : 'no_thinking');
        expect(messages.usage.input_tokens).to.be.greaterThan(0);
        expect(messages.usage.output_tokens).to.be.greaterThan(0);

        const detail = await usageDetail(t, owner.token, keyId);
        const find = (requestId: string): UsageItem => {
          const item = detail.items.find((i) => i.request_id === requestId);
          expect(item, `usage record of ${requestId}`).to.not.equal(undefined);
          return item!;
        };
        const fromMessages = find(messages.requestId);
        const fromChat = find(chat.requestId);
        const fromResponses = find(responses.requestId);
        expect(fromMessages.form).to.equal('messages');
        expect(fromChat.form).to.equal('chat_completions');
        expect(fromResponses.form).to.equal('responses');
        // Only the Responses form has a response id (its stored response).
        expect(fromResponses.response_id).to.match(/^resp_/);
        const comparable = ({ request_id: _id, response_id: _response, created_at: _at, form: _form, ...rest }: UsageItem) => rest;
        expect(comparable(fromChat), 'usage record').to.deep.equal(comparable(fromMessages));
        expect(comparable(fromResponses), 'usage record (responses)').to.deep.equal(comparable(fromMessages));
        expect(fromMessages).to.include({ status: 'ok', stream: c.stream, thinking: messages.usage.thinking, model: MODEL });
        // The record and the response agree.
        const tier = messages.usage.price_tier;
        expect(fromMessages.tiers[`${tier}.input_cache_hit`]).to.equal(messages.usage.cached_input_tokens);
        expect(fromMessages.tiers[`${tier}.input_cache_miss`]).to.equal(messages.usage.input_tokens - messages.usage.cached_input_tokens);
        expect(fromMessages.tiers[`${tier}.output`]).to.equal(messages.usage.output_tokens);
      }),
      { numRuns: 15 },
    );
    expect(runs).to.be.at.least(15);
  });
});
