// What goes upstream on a same-protocol call: the caller's body with only
// the fields the gateway owns changed (docs/architecture.md §4), and across protocols the
// refusal of what the other protocol cannot honour.
import { expect } from 'chai';
import { decodeChatRequest, type ChatCompletionRequest } from '../../../src/data-plane/chat/chat.decoder';
import { decodeMessagesRequest, type MessagesRequest } from '../../../src/data-plane/messages/messages.decoder';
import { AppError } from '../../../src/errors';
import { anthropicBody } from '../../../src/providers/anthropic/anthropic-request.mapper';
import { openAiBody } from '../../../src/providers/openai/openai-request.mapper';
import { fakeDeployment } from '../../support/fake-upstreams';

const claude = fakeDeployment('anthropic', { model: 'claude-up' });
const claudeThinking = fakeDeployment('anthropic', { model: 'claude-up', thinking: true });
const gpt = fakeDeployment('openai', { model: 'gpt-up' });
const gptReasoning = fakeDeployment('openai', { model: 'gpt-up', thinking: true });

const messages = (extra: Record<string, unknown> = {}): MessagesRequest =>
  ({ model: 'm', max_tokens: 4000, messages: [{ role: 'user', content: 'hi' }], ...extra }) as MessagesRequest;

const chat = (extra: Record<string, unknown> = {}): ChatCompletionRequest =>
  ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }) as ChatCompletionRequest;

describe('pass-through bodies', () => {
  describe('Messages → Anthropic', () => {
    it('is the caller’s body with the deployment’s model, and nothing dropped', () => {
      const body = messages({ temperature: 0.3, top_k: 5, future: { a: 1 } });
      const dropped: string[] = [];
      expect(anthropicBody(decodeMessagesRequest(body), claude, dropped)).to.deep.equal({ ...body, model: 'claude-up' });
      expect(dropped).to.deep.equal([]);
    });

    it('turns on thinking a deployment forces when the caller chose nothing, with the max_tokens it needs and without the sampling it forbids', () => {
      const body = messages({ max_tokens: 1000, temperature: 0.3, top_k: 5, top_p: 0.5 });
      const sent = anthropicBody(decodeMessagesRequest(body), claudeThinking, []);
      expect(sent.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
      expect(sent.max_tokens).to.equal(2024);
      expect(sent).to.not.have.any.keys('temperature', 'top_k', 'top_p');
    });

    it('keeps the caller’s own thinking choice on such a deployment: adaptive stays adaptive, disabled stays off', () => {
      for (const thinking of [{ type: 'adaptive' }, { type: 'disabled' }, { type: 'enabled', budget_tokens: 2000 }]) {
        const body = messages({ thinking, temperature: 1 });
        expect(anthropicBody(decodeMessagesRequest(body), claudeThinking, [])).to.deep.equal({ ...body, model: 'claude-up' });
      }
    });

    it('sends a max_tokens the gateway lowered', () => {
      const request = decodeMessagesRequest(messages({ max_tokens: 9000 }));
      request.maxTokens = 500;
      expect(anthropicBody(request, claude, []).max_tokens).to.equal(500);
    });
  });

  describe('chat → OpenAI', () => {
    it('is the caller’s body with the deployment’s model, and an output bound when the caller set none', () => {
      const body = chat({ max_completion_tokens: 300, logprobs: true, seed: 1 });
      expect(openAiBody(decodeChatRequest(body, 777), gpt, [])).to.deep.equal({ ...body, model: 'gpt-up' });
      expect(openAiBody(decodeChatRequest(chat(), 777), gpt, [])).to.deep.equal({ ...chat(), model: 'gpt-up', max_tokens: 777 });
    });

    it('sends one output bound: every bound field the caller sent carries the reserved max_tokens, lowered in each', () => {
      const both = decodeChatRequest(chat({ max_tokens: 900, max_completion_tokens: 900 }), 777);
      both.maxTokens = 300;
      expect(openAiBody(both, gpt, [])).to.include({ max_tokens: 300, max_completion_tokens: 300 });
      const newer = decodeChatRequest(chat({ max_completion_tokens: 900, max_tokens: null }), 777);
      newer.maxTokens = 300;
      expect(openAiBody(newer, gpt, [])).to.include({ max_completion_tokens: 300, max_tokens: null });
      // None sent: the one field the model takes (reasoning models only max_completion_tokens).
      expect(openAiBody(decodeChatRequest(chat({ reasoning_effort: 'low' }), 777), gpt, [])).to.include({ max_completion_tokens: 777 }).and.not.have.property('max_tokens');
    });

    it('refuses two bounds that disagree (400 naming max_tokens); equal ones are one bound', () => {
      let error: unknown;
      try {
        decodeChatRequest(chat({ max_completion_tokens: 10, max_tokens: 900000 }), 777);
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(AppError);
      expect(error).to.include({ status: 400, field: 'max_tokens' });
      expect((error as AppError).message).to.equal('max_tokens (900000) conflicts with max_completion_tokens (10): send one of them, or the same value in both');
      expect(decodeChatRequest(chat({ max_completion_tokens: 10, max_tokens: 10 }), 777).maxTokens).to.equal(10);
    });

    it('asks for usage in streams, keeping the caller’s other stream options', () => {
      const body = chat({ stream: true, max_tokens: 10, stream_options: { include_obfuscation: false } });
      expect(openAiBody(decodeChatRequest(body, 777), gpt, []).stream_options).to.deep.equal({ include_obfuscation: false, include_usage: true });
    });

    it('forces reasoning on a reasoning deployment only when the caller chose nothing', () => {
      const forced = openAiBody(decodeChatRequest(chat({ max_tokens: 10, temperature: 0.2 }), 777), gptReasoning, []);
      expect(forced.reasoning_effort).to.equal('high');
      expect(forced).to.not.have.property('temperature');
      const chosen = chat({ max_tokens: 10, reasoning_effort: 'low' });
      expect(openAiBody(decodeChatRequest(chosen, 777), gptReasoning, [])).to.deep.equal({ ...chosen, model: 'gpt-up' });
    });
  });

  describe('across protocols', () => {
    it('lists what a Messages body loses towards OpenAI, and refuses server tools naming the field and the protocol', () => {
      const dropped: string[] = [];
      openAiBody(decodeMessagesRequest(messages({ top_k: 3, context_management: {}, system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }] })), gpt, dropped);
      expect(dropped).to.have.members(['top_k', 'context_management', 'cache_control']);

      let caught: unknown;
      try {
        openAiBody(decodeMessagesRequest(messages({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] })), gpt, []);
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(AppError);
      expect((caught as AppError).status).to.equal(400);
      expect((caught as AppError).field).to.equal('tools.0.type');
      expect((caught as AppError).message).to.contain('openai');
    });

    it('lists what a chat body loses towards Anthropic, and refuses logit_bias', () => {
      const dropped: string[] = [];
      anthropicBody(decodeChatRequest(chat({ presence_penalty: 0.5, seed: 3 }), 777), claude, dropped);
      expect(dropped).to.have.members(['presence_penalty', 'seed']);
      let caught: unknown;
      try {
        anthropicBody(decodeChatRequest(chat({ logit_bias: { '50256': -100 } }), 777), claude, []);
      } catch (error) {
        caught = error;
      }
      expect((caught as AppError).field).to.equal('logit_bias');
      expect((caught as AppError).message).to.contain('anthropic');
    });
  });
});
