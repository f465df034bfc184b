// Pure mapping between the canonical shapes and the Anthropic Messages API.
// Wire types are the official SDK's (type-only imports, erased at run time),
// so a field the upstream renames shows up as a type error, not a silent gap.
import type {
  ContentBlock,
  ContentBlockParam,
  ImageBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageParam,
  RawContentBlockDelta,
  RawContentBlockStartEvent,
  RawMessageDeltaEvent,
  RawMessageStartEvent,
  StopReason as AnthropicStopReason,
  ToolChoice,
} from '@anthropic-ai/sdk/resources/messages';
import type {
  CanonicalContent,
  CanonicalEvent,
  CanonicalRequest,
  CanonicalToolChoice,
  StopReason,
  UpstreamUsage,
} from '../../data-plane/canonical';
import type { Deployment } from '../../routing/catalog.types';
import { UpstreamError } from '../provider';
import { isRecord } from '../upstream-http';

/** Anthropic refuses thinking budgets below this. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * The thinking budget and the max_tokens to send with it. Anthropic counts
 * thinking inside max_tokens and requires max_tokens > budget, so when the
 * budget would eat the caller's whole allowance the answer keeps its own
 * `maxTokens` on top of the budget.
 */
export function thinkingBudget(request: CanonicalRequest): { budgetTokens: number; maxTokens: number } {
  const max = request.maxTokens;
  const fallback = Math.min(Math.max(MIN_THINKING_BUDGET, Math.floor(max / 2)), max - 1);
  const budgetTokens = Math.max(MIN_THINKING_BUDGET, request.thinking?.budgetTokens ?? fallback);
  return { budgetTokens, maxTokens: max > budgetTokens ? max : budgetTokens + max };
}

/**
 * The request body. SDK 1.x dropped the sampling parameters from its types as
 * newer models ignore them, but the API still takes them for the models that
 * honour them, so they are added back here.
 */
export type AnthropicRequestBody = MessageCreateParamsBase & { temperature?: number; top_p?: number; top_k?: number };

export function toAnthropicRequest(request: CanonicalRequest, deployment: Deployment): AnthropicRequestBody {
  const body: AnthropicRequestBody = {
    model: deployment.model,
    max_tokens: request.maxTokens,
    messages: toMessages(request),
    stream: request.stream,
  };
  if (request.system !== undefined && request.system !== '') body.system = request.system;
  if (request.stopSequences?.length) body.stop_sequences = request.stopSequences;
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      input_schema: { type: 'object' as const, ...tool.inputSchema },
    }));
  }
  if (request.toolChoice) body.tool_choice = toToolChoice(request.toolChoice);
  if (request.userId !== undefined) body.metadata = { user_id: request.userId };
  if (deployment.thinking) {
    const { budgetTokens, maxTokens } = thinkingBudget(request);
    body.thinking = { type: 'enabled', budget_tokens: budgetTokens };
    body.max_tokens = maxTokens;
    // With thinking on, Anthropic rejects temperature/top_k changes and top_p
    // below 0.95; dropping them beats failing the call.
    if (request.topP !== undefined && request.topP >= 0.95) body.top_p = request.topP;
  } else {
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.topP !== undefined) body.top_p = request.topP;
    if (request.topK !== undefined) body.top_k = request.topK;
  }
  return body;
}

function toMessages(request: CanonicalRequest): MessageParam[] {
  const messages: MessageParam[] = [];
  for (const message of request.messages) {
    const content = message.content.flatMap(toContentBlock);
    // A message left empty (only unsigned thinking) would be a 400 upstream.
    if (content.length === 0) continue;
    if (message.role === 'system') messages.push({ role: 'system', content: content.filter((c) => c.type === 'text') });
    else messages.push({ role: message.role, content });
  }
  return messages;
}

function toContentBlock(block: CanonicalContent): ContentBlockParam[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: block.text }];
    case 'image':
      return [
        {
          type: 'image',
          source: { type: 'base64', media_type: block.mediaType as ImageMediaType, data: block.data },
        },
      ];
    case 'tool_use':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input }];
    case 'tool_result':
      return [
        {
          type: 'tool_result',
          tool_use_id: block.toolUseId,
          content: block.content,
          ...(block.isError !== undefined ? { is_error: block.isError } : {}),
        },
      ];
    case 'thinking':
      // Anthropic verifies the signature of replayed thinking; thinking that
      // came from another upstream has none and would be refused.
      return block.signature ? [{ type: 'thinking', thinking: block.thinking, signature: block.signature }] : [];
  }
}

type ImageMediaType = Extract<ImageBlockParam['source'], { type: 'base64' }>['media_type'];

function toToolChoice(choice: CanonicalToolChoice): ToolChoice {
  switch (choice.type) {
    case 'auto':
    case 'any':
    case 'none':
      return { type: choice.type };
    case 'tool':
      return { type: 'tool', name: choice.name };
  }
}

export function toStopReason(reason: AnthropicStopReason | string | null | undefined): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'max_tokens':
    case 'stop_sequence':
    case 'tool_use':
    case 'refusal':
    case 'pause_turn':
      return reason;
    case 'model_context_window_exceeded':
      return 'max_tokens';
    default:
      return 'end_turn';
  }
}

interface AnthropicUsageFields {
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens?: number | null;
}

/**
 * Anthropic usage is cumulative and newer API versions repeat the input and
 * cache fields in `message_delta`, so each field overwrites the last value
 * seen; the miss count is derived from the latest input and cache-creation
 * values together, whichever of them this event carried.
 */
export class AnthropicUsageTracker {
  private input = 0;
  private cacheCreation = 0;

  apply(fields: AnthropicUsageFields | null | undefined): Partial<UpstreamUsage> | undefined {
    if (!fields) return undefined;
    const usage: Partial<UpstreamUsage> = {};
    if (typeof fields.cache_read_input_tokens === 'number') usage.inputCacheHit = fields.cache_read_input_tokens;
    const hasInput = typeof fields.input_tokens === 'number';
    const hasCreation = typeof fields.cache_creation_input_tokens === 'number';
    if (typeof fields.input_tokens === 'number') this.input = fields.input_tokens;
    if (typeof fields.cache_creation_input_tokens === 'number') this.cacheCreation = fields.cache_creation_input_tokens;
    if (hasInput || hasCreation) usage.inputCacheMiss = this.input + this.cacheCreation;
    if (typeof fields.output_tokens === 'number') usage.output = fields.output_tokens;
    return Object.keys(usage).length > 0 ? usage : undefined;
  }
}

/** A plain (non-streamed) Messages reply as the same event sequence a stream gives. */
export function fromAnthropicMessage(body: unknown): CanonicalEvent[] {
  if (!isRecord(body) || typeof body.id !== 'string' || !Array.isArray(body.content)) {
    throw new UpstreamError('protocol', 'upstream reply is not an Anthropic message');
  }
  const message = body as unknown as Message;
  const events: CanonicalEvent[] = [{ type: 'message_start', id: message.id, model: message.model }];
  let index = 0;
  for (const block of message.content) {
    const mapped = blockEvents(block, index);
    if (mapped.length === 0) continue;
    events.push(...mapped);
    index++;
  }
  const usage = new AnthropicUsageTracker().apply(message.usage);
  if (usage) events.push({ type: 'usage', usage });
  events.push({
    type: 'message_stop',
    stopReason: toStopReason(message.stop_reason),
    stopSequence: message.stop_sequence ?? null,
  });
  return events;
}

function blockEvents(block: ContentBlock, index: number): CanonicalEvent[] {
  switch (block.type) {
    case 'text':
      return [
        { type: 'block_start', index, block: { type: 'text' } },
        { type: 'text_delta', index, text: block.text },
        { type: 'block_stop', index },
      ];
    case 'tool_use':
      return [
        { type: 'block_start', index, block: { type: 'tool_use', id: block.id, name: block.name } },
        { type: 'tool_input_delta', index, partialJson: JSON.stringify(block.input ?? {}) },
        { type: 'block_stop', index },
      ];
    case 'thinking':
      return [
        { type: 'block_start', index, block: { type: 'thinking' } },
        { type: 'thinking_delta', index, text: block.thinking },
        ...(block.signature ? [{ type: 'signature_delta' as const, index, signature: block.signature }] : []),
        { type: 'block_stop', index },
      ];
    default:
      // Server-side tool blocks and redacted thinking have no canonical form.
      return [];
  }
}

type StartBlock = RawContentBlockStartEvent['content_block'];

/**
 * Incremental mapper for a streamed reply, fed one parsed SSE event at a
 * time. Upstream block indexes are renumbered so that blocks without a
 * canonical form (server tools, redacted thinking) leave no gaps.
 */
export class AnthropicStreamMapper {
  private started = false;
  private stopped = false;
  private readonly blocks = new Map<number, number>();
  private nextIndex = 0;
  private stopReason: StopReason = 'end_turn';
  private stopSequence: string | null = null;
  private readonly usage = new AnthropicUsageTracker();

  /** True once `message_stop` was mapped: the reply is complete. */
  get done(): boolean {
    return this.stopped;
  }

  push(eventName: string | undefined, payload: unknown): CanonicalEvent[] {
    const type = isRecord(payload) && typeof payload.type === 'string' ? payload.type : eventName;
    if (type === 'ping') return [];
    if (type === 'error') throw streamError(payload);
    if (!isRecord(payload)) throw new UpstreamError('protocol', `upstream sent a malformed ${type ?? 'event'}`);
    if (type !== 'message_start' && !this.started && isKnownEvent(type)) {
      throw new UpstreamError('protocol', `upstream sent ${type} before message_start`);
    }
    switch (type) {
      case 'message_start':
        return this.messageStart(payload as unknown as RawMessageStartEvent);
      case 'content_block_start':
        return this.blockStart(payload as unknown as RawContentBlockStartEvent);
      case 'content_block_delta':
        return this.blockDelta(numberOf(payload.index), payload.delta as RawContentBlockDelta);
      case 'content_block_stop': {
        const index = this.blocks.get(numberOf(payload.index));
        return index === undefined ? [] : [{ type: 'block_stop', index }];
      }
      case 'message_delta':
        return this.messageDelta(payload as unknown as RawMessageDeltaEvent);
      case 'message_stop':
        this.stopped = true;
        return [{ type: 'message_stop', stopReason: this.stopReason, stopSequence: this.stopSequence }];
      default:
        // Event types added after this adapter was written are skipped, as
        // the official clients do.
        return [];
    }
  }

  private messageStart(event: RawMessageStartEvent): CanonicalEvent[] {
    if (this.started) throw new UpstreamError('protocol', 'upstream sent a second message_start');
    this.started = true;
    const message = isRecord(event.message) ? event.message : undefined;
    const events: CanonicalEvent[] = [
      { type: 'message_start', id: String(message?.id ?? ''), model: String(message?.model ?? '') },
    ];
    const usage = this.usage.apply(message?.usage);
    if (usage) events.push({ type: 'usage', usage });
    return events;
  }

  private blockStart(event: RawContentBlockStartEvent): CanonicalEvent[] {
    const block: StartBlock | undefined = isRecord(event.content_block) ? event.content_block : undefined;
    if (!block) return [];
    const index = this.nextIndex;
    let events: CanonicalEvent[];
    switch (block.type) {
      case 'text':
        events = [{ type: 'block_start', index, block: { type: 'text' } }];
        if (block.text) events.push({ type: 'text_delta', index, text: block.text });
        break;
      case 'thinking':
        events = [{ type: 'block_start', index, block: { type: 'thinking' } }];
        if (block.thinking) events.push({ type: 'thinking_delta', index, text: block.thinking });
        if (block.signature) events.push({ type: 'signature_delta', index, signature: block.signature });
        break;
      case 'tool_use': {
        events = [{ type: 'block_start', index, block: { type: 'tool_use', id: block.id, name: block.name } }];
        // Streams announce `input: {}` and send the JSON as deltas; only a
        // non-empty start input is content of its own.
        const input: unknown = block.input;
        if (isRecord(input) && Object.keys(input).length > 0) {
          events.push({ type: 'tool_input_delta', index, partialJson: JSON.stringify(input) });
        }
        break;
      }
      default:
        return [];
    }
    this.blocks.set(numberOf(event.index), index);
    this.nextIndex++;
    return events;
  }

  private blockDelta(upstreamIndex: number, delta: RawContentBlockDelta | undefined): CanonicalEvent[] {
    const index = this.blocks.get(upstreamIndex);
    if (index === undefined || !isRecord(delta)) return [];
    switch (delta.type) {
      case 'text_delta':
        return delta.text ? [{ type: 'text_delta', index, text: delta.text }] : [];
      case 'input_json_delta':
        return delta.partial_json ? [{ type: 'tool_input_delta', index, partialJson: delta.partial_json }] : [];
      case 'thinking_delta':
        return delta.thinking ? [{ type: 'thinking_delta', index, text: delta.thinking }] : [];
      case 'signature_delta':
        return delta.signature ? [{ type: 'signature_delta', index, signature: delta.signature }] : [];
      default:
        return [];
    }
  }

  private messageDelta(event: RawMessageDeltaEvent): CanonicalEvent[] {
    const delta = isRecord(event.delta) ? event.delta : undefined;
    if (delta?.stop_reason) this.stopReason = toStopReason(delta.stop_reason);
    if (delta && delta.stop_sequence !== undefined) this.stopSequence = delta.stop_sequence;
    const usage = this.usage.apply(isRecord(event.usage) ? event.usage : undefined);
    return usage ? [{ type: 'usage', usage }] : [];
  }
}

function isKnownEvent(type: string | undefined): boolean {
  return (
    type === 'content_block_start' ||
    type === 'content_block_delta' ||
    type === 'content_block_stop' ||
    type === 'message_delta' ||
    type === 'message_stop'
  );
}

function numberOf(value: unknown): number {
  return typeof value === 'number' ? value : -1;
}

/** The `error` event of a stream: `{ type: "error", error: { type, message } }`. */
function streamError(payload: unknown): UpstreamError {
  const error = isRecord(payload) && isRecord(payload.error) ? payload.error : undefined;
  const message = typeof error?.message === 'string' ? error.message : 'upstream stream error';
  const upstreamType = typeof error?.type === 'string' ? error.type : undefined;
  return new UpstreamError('protocol', message, undefined, upstreamType);
}
