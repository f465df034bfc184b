// CanonicalEvents → the OpenAI chat-completions form: a chat.completion
// object, or chat.completion.chunk events ending with an optional usage chunk
// (`choices: []`) and `data: [DONE]` (DESIGN §6 wire facts).
import type { components } from '../../generated/messages';
import type { AppError } from '../../errors';
import type { ResponseUsage } from '../../metering/tiers';
import type { CanonicalContent, CanonicalEvent, StopReason } from '../canonical';
import { errorBody } from '../http/error-envelopes';

type ChatCompletion = components['schemas']['ChatCompletion'];
type ChatFinishReason = components['schemas']['ChatFinishReason'];

const FINISH: Record<StopReason, ChatFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export const finishReason = (stop: StopReason): ChatFinishReason => FINISH[stop];

/** Spec §2.4: prompt/completion tokens are the unified input/output tokens. */
export function chatUsage(usage: ResponseUsage) {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_input_tokens },
    cached_input_tokens: usage.cached_input_tokens,
    price_tier: usage.price_tier,
    thinking: usage.thinking,
  };
}

export function encodeChatCompletion(
  id: string,
  model: string,
  content: CanonicalContent[],
  stop: StopReason,
  usage: ResponseUsage,
): ChatCompletion {
  const text = content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('');
  const reasoning = content.flatMap((c) => (c.type === 'thinking' ? [c.thinking] : [])).join('');
  const toolCalls = content.flatMap((c) =>
    c.type === 'tool_use' ? [{ id: c.id, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) } }] : [],
  );
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (toolCalls.length > 0 ? null : ''),
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          ...(reasoning ? { reasoning_content: reasoning } : {}),
        },
        finish_reason: finishReason(stop),
        logprobs: null,
      },
    ],
    usage: chatUsage(usage),
  } as ChatCompletion;
}

const data = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;

export class ChatStreamEncoder {
  private readonly created = Math.floor(Date.now() / 1000);
  /** Upstream block index → OpenAI tool_calls index. */
  private readonly toolIndex = new Map<number, number>();

  constructor(
    private readonly id: string,
    private readonly model: string,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(delta: Record<string, unknown>, finish: ChatFinishReason | null = null): string {
    return data({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
  }

  start(): string {
    return this.chunk({ role: 'assistant', content: '' });
  }

  event(e: CanonicalEvent): string {
    switch (e.type) {
      case 'text_delta':
        return this.chunk({ content: e.text });
      case 'thinking_delta':
        return this.chunk({ reasoning_content: e.text });
      case 'block_start':
        if (e.block.type !== 'tool_use') return '';
        this.toolIndex.set(e.index, this.toolIndex.size);
        return this.chunk({
          tool_calls: [{ index: this.toolIndex.get(e.index), id: e.block.id, type: 'function', function: { name: e.block.name, arguments: '' } }],
        });
      case 'tool_input_delta':
        return this.chunk({ tool_calls: [{ index: this.toolIndex.get(e.index) ?? 0, function: { arguments: e.partialJson } }] });
      default:
        return '';
    }
  }

  finish(stop: StopReason, usage: ResponseUsage): string {
    let out = this.chunk({}, finishReason(stop));
    if (this.includeUsage) {
      out += data({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: chatUsage(usage) });
    }
    return `${out}data: [DONE]\n\n`;
  }

  error(error: AppError, requestId: string): string {
    return `${data(errorBody('openai', error, requestId))}data: [DONE]\n\n`;
  }
}
