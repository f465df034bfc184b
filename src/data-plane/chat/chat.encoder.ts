// CanonicalEvents → the OpenAI chat-completions form: a chat.completion
// object, or chat.completion.chunk events ending with an optional usage chunk
// (`choices: []`) and `data: [DONE]` (docs/architecture.md §4 wire facts).
import type { components } from '../../generated/messages';
import type { AppError } from '../../errors';
import type { ResponseUsage } from '../../metering/tiers';
import type { CanonicalContent, CanonicalEvent, MessageStopRaw, RawObject, StopReason } from '../../core/canonical';

type StopEvent = Extract<CanonicalEvent, { type: 'message_stop' }>;
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

/** Spec §2.4: prompt/completion tokens are the unified input/output tokens; `extra` are the upstream's usage fields the gateway does not own. */
export function chatUsage(usage: ResponseUsage, extra?: RawObject) {
  return {
    ...extra,
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_input_tokens },
    cached_input_tokens: usage.cached_input_tokens,
    price_tier: usage.price_tier,
    thinking: usage.thinking,
  };
}

/** The finish reason to send: a guardrail's refusal, else the upstream's own word when relaying, else the mapped one. */
function finishOf(stop: StopReason, raw: MessageStopRaw | undefined, relay: boolean): string {
  return stop !== 'refusal' && relay && raw?.stopReason !== undefined ? raw.stopReason : finishReason(stop);
}

export interface PlainCompletion {
  id: string;
  model: string;
  content: CanonicalContent[];
  stop: StopReason;
  /** From an OpenAI-protocol upstream (`relay`): its own fields, kept. */
  messageRaw?: RawObject | undefined;
  usageExtra?: RawObject | undefined;
  stopRaw?: MessageStopRaw | undefined;
}

export function encodeChatCompletion(answer: PlainCompletion, usage: ResponseUsage, relay: boolean): ChatCompletion {
  const { content } = answer;
  const text = content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('');
  const reasoning = content.flatMap((c) => (c.type === 'thinking' ? [c.thinking] : [])).join('');
  const toolCalls = content.flatMap((c) =>
    c.type === 'tool_use' ? [{ id: c.id, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) } }] : [],
  );
  const raw = relay ? answer.stopRaw : undefined;
  return {
    ...(relay ? answer.messageRaw : undefined),
    id: answer.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [
      {
        logprobs: null,
        ...raw?.choice,
        index: 0,
        message: {
          refusal: null,
          ...raw?.message,
          role: 'assistant',
          content: text || (toolCalls.length > 0 ? null : ''),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          ...(reasoning ? { reasoning_content: reasoning } : {}),
        },
        finish_reason: finishOf(answer.stop, raw, relay),
      },
    ],
    usage: chatUsage(usage, relay ? answer.usageExtra : undefined),
  } as ChatCompletion;
}

const data = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;

export class ChatStreamEncoder {
  private readonly created = Math.floor(Date.now() / 1000);
  /** Upstream block index → OpenAI tool_calls index. */
  private readonly toolIndex = new Map<number, number>();
  /** An OpenAI-protocol upstream's own chunk fields (`system_fingerprint`, …), repeated on every chunk as it does. */
  private chunkRaw: RawObject | undefined;
  private usageExtra: RawObject | undefined;

  constructor(
    private readonly id: string,
    private readonly model: string,
    private readonly includeUsage: boolean,
    /** The upstream speaks this protocol: its own fields go out too. */
    private readonly relay: boolean,
  ) {}

  private chunk(delta: Record<string, unknown>, finish: string | null = null, choice?: RawObject): string {
    return data({
      ...this.chunkRaw,
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ logprobs: null, ...choice, index: 0, delta, finish_reason: finish }],
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
        return this.toolIndex.has(e.index) ? this.chunk({ tool_calls: [{ index: this.toolIndex.get(e.index), function: { arguments: e.partialJson } }] }) : '';
      case 'raw_delta':
        return this.relay && e.index < 0 ? this.chunk(e.delta, null, e.choice) : '';
      case 'raw_event':
        // An Anthropic upstream's keep-alive: an SSE comment keeps the client's connection (and proxies) alive the same way.
        return e.event === 'ping' ? ': ping\n\n' : '';
      case 'message_start':
        if (this.relay) this.chunkRaw = e.raw;
        return '';
      case 'usage':
        if (this.relay && e.extra) this.usageExtra = { ...this.usageExtra, ...e.extra };
        return '';
      default:
        return '';
    }
  }

  finish(stop: StopEvent, usage: ResponseUsage): string {
    let out = this.chunk({}, finishOf(stop.stopReason, stop.raw, this.relay));
    if (this.includeUsage) {
      out += data({
        ...this.chunkRaw,
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.created,
        model: this.model,
        choices: [],
        usage: chatUsage(usage, this.usageExtra),
      });
    }
    return `${out}data: [DONE]\n\n`;
  }

  error(error: AppError, requestId: string): string {
    return `${data(errorBody('openai', error, requestId))}data: [DONE]\n\n`;
  }
}
