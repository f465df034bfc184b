// CanonicalEvents → the Anthropic Messages form: one JSON object, or the exact
// SSE event sequence the official client expects (docs/architecture.md §4 wire facts).
// From an Anthropic upstream (`relay`), everything the upstream sent beyond
// the canonical fields goes out as it came: the message's own fields, block
// kinds, delta and event kinds, usage fields and stop reasons the gateway
// does not know. Only the id, the model, the usage the gateway owns and
// guardrail edits change.
import type { components } from '../../generated/messages';
import type { AppError } from '../../errors';
import type { ResponseUsage } from '../../metering/tiers';
import type { BlockStart, CanonicalContent, CanonicalEvent, MessageStopRaw, RawObject, StopReason } from '../../core/canonical';
import type { CollectedBlock } from '../collect-response';
import { errorBody } from '../http/error-envelopes';

type Message = components['schemas']['Message'];
type StopEvent = Extract<CanonicalEvent, { type: 'message_stop' }>;

/**
 * Messages-form usage: the upstream's own usage fields the gateway does not
 * own (`server_tool_use`, `service_tier`, …), then the gateway's. No
 * `cache_read_input_tokens` or `cache_creation_input_tokens`: `input_tokens`
 * already counts cached tokens, and Anthropic clients add those two on top
 * of it, which would count them twice and make an agent compact its context
 * early.
 */
export const messagesUsage = (usage: ResponseUsage, extra?: RawObject): RawObject => (extra ? { ...extra, ...usage } : { ...usage });

/** The stop reason to send: a guardrail's refusal, else the upstream's own word when relaying, else the canonical one. */
function stopReasonOf(stop: StopReason, raw: MessageStopRaw | undefined, relay: boolean): string {
  return stop !== 'refusal' && relay && raw?.stopReason !== undefined ? raw.stopReason : stop;
}

function canonicalBlock(c: CanonicalContent): RawObject | undefined {
  switch (c.type) {
    case 'text':
      return { type: 'text', text: c.text };
    case 'tool_use':
      return { type: 'tool_use', id: c.id, name: c.name, input: c.input ?? {} };
    case 'thinking':
      return { type: 'thinking', thinking: c.thinking, signature: c.signature ?? '' };
    default:
      return undefined;
  }
}

/** The upstream's own block with the (guardrail-checked) collected content in place of its own. */
function relayedBlock({ content, raw }: CollectedBlock): RawObject | undefined {
  if (!raw) return canonicalBlock(content);
  switch (content.type) {
    case 'text':
      return { ...raw, text: content.text };
    case 'tool_use':
      return { ...raw, input: content.input ?? {} };
    case 'thinking':
      return { ...raw, thinking: content.thinking, ...(content.signature !== undefined || 'signature' in raw ? { signature: content.signature ?? '' } : {}) };
    case 'other':
      return content.raw;
    default:
      return raw;
  }
}

export interface PlainMessage {
  id: string;
  model: string;
  blocks: CollectedBlock[];
  stopReason: StopReason;
  stopSequence: string | null;
  messageRaw?: RawObject | undefined;
  usageExtra?: RawObject | undefined;
  stopRaw?: MessageStopRaw | undefined;
}

export function encodeMessage(response: PlainMessage, usage: ResponseUsage, relay: boolean): Message {
  const content = response.blocks.flatMap((b) => (relay ? relayedBlock(b) : canonicalBlock(b.content)) ?? []);
  return {
    ...(relay ? response.messageRaw : undefined),
    id: response.id,
    type: 'message',
    role: 'assistant',
    model: response.model,
    content,
    stop_reason: stopReasonOf(response.stopReason, response.stopRaw, relay),
    stop_sequence: response.stopSequence,
    usage: messagesUsage(usage, relay ? response.usageExtra : undefined),
  } as Message;
}

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function contentBlock(block: BlockStart, relay: boolean): RawObject {
  if (relay && block.raw) {
    // Initial text, thinking and input arrive as deltas of their own.
    switch (block.type) {
      case 'text':
        return { ...block.raw, text: '' };
      case 'thinking':
        return { ...block.raw, thinking: '', ...('signature' in block.raw ? { signature: '' } : {}) };
      case 'tool_use':
        return { ...block.raw, input: {} };
      case 'other':
        return block.raw;
    }
  }
  switch (block.type) {
    case 'text':
      return { type: 'text', text: '' };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: {} };
    case 'thinking':
      return { type: 'thinking', thinking: '', signature: '' };
    case 'other':
      return block.raw;
  }
}

/**
 * Stateful SSE encoder. Block indices are renumbered densely from 0, so a
 * block the gateway drops never leaves a gap the client would trip on.
 */
export class MessagesStreamEncoder {
  private readonly indexMap = new Map<number, number>();
  private messageRaw: RawObject | undefined;
  private usageExtra: RawObject | undefined;

  /** `relay`: the upstream speaks this protocol, so its own fields, blocks and events go out too. */
  constructor(private readonly relay: boolean) {}

  start(id: string, model: string, usage: ResponseUsage): string {
    return (
      sse('message_start', {
        type: 'message_start',
        message: {
          ...this.messageRaw,
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: messagesUsage(usage, this.usageExtra),
        },
      }) + sse('ping', { type: 'ping' })
    );
  }

  private index(upstream: number): number {
    let index = this.indexMap.get(upstream);
    if (index === undefined) {
      index = this.indexMap.size;
      this.indexMap.set(upstream, index);
    }
    return index;
  }

  private delta(upstream: number, delta: RawObject): string {
    return sse('content_block_delta', { type: 'content_block_delta', index: this.index(upstream), delta });
  }

  /** One canonical event → its SSE text ('' for events with no wire form of their own). */
  event(e: CanonicalEvent): string {
    switch (e.type) {
      case 'block_start':
        if (e.block.type === 'other' && !this.relay) return '';
        return sse('content_block_start', { type: 'content_block_start', index: this.index(e.index), content_block: contentBlock(e.block, this.relay) });
      case 'text_delta':
        return this.delta(e.index, { type: 'text_delta', text: e.text });
      case 'tool_input_delta':
        return this.delta(e.index, { type: 'input_json_delta', partial_json: e.partialJson });
      case 'thinking_delta':
        return this.delta(e.index, { type: 'thinking_delta', thinking: e.text });
      case 'signature_delta':
        return this.delta(e.index, { type: 'signature_delta', signature: e.signature });
      case 'raw_delta':
        return this.relay && this.indexMap.has(e.index) ? this.delta(e.index, e.delta) : '';
      case 'block_stop':
        return this.indexMap.has(e.index) ? sse('content_block_stop', { type: 'content_block_stop', index: this.index(e.index) }) : '';
      case 'raw_event':
        return this.relay ? sse(e.event, e.data) : '';
      case 'message_start':
        if (this.relay) this.messageRaw = e.raw;
        return '';
      case 'usage':
        if (this.relay && e.extra) this.usageExtra = { ...this.usageExtra, ...e.extra };
        return '';
      case 'message_stop':
        return '';
    }
  }

  /** `message_delta` carries cumulative usage (overwrite semantics), then `message_stop`. */
  finish(stop: StopEvent, usage: ResponseUsage): string {
    const raw = this.relay ? stop.raw : undefined;
    return (
      sse('message_delta', {
        ...raw?.event,
        type: 'message_delta',
        delta: { ...raw?.delta, stop_reason: stopReasonOf(stop.stopReason, raw, this.relay), stop_sequence: stop.stopSequence ?? null },
        usage: messagesUsage(usage, this.usageExtra),
      }) + sse('message_stop', { type: 'message_stop' })
    );
  }

  error(error: AppError, requestId: string): string {
    return sse('error', errorBody('anthropic', error, requestId));
  }
}
