// CanonicalEvents → the Anthropic Messages form: one JSON object, or the exact
// SSE event sequence the official client expects (DESIGN §6 wire facts).
import type { components } from '../../generated/messages';
import type { AppError } from '../../errors';
import type { ResponseUsage } from '../../metering/tiers';
import type { BlockStart, CanonicalEvent, CanonicalResponse, StopReason } from '../canonical';
import { errorBody } from '../http/error-envelopes';

type Message = components['schemas']['Message'];
type ContentBlock = components['schemas']['ContentBlock'];

/**
 * Messages-form usage: the shared fields plus `cache_read_input_tokens` (the
 * contract's Anthropic name for `cached_input_tokens`). The Anthropic client
 * keeps that one from `message_delta`, unlike the gateway's own fields, which
 * it keeps only from `message_start`; an upstream that reports its cache hits
 * only at the end (OpenAI protocol) can then still reach the client's final
 * message.
 */
export const messagesUsage = (usage: ResponseUsage) => ({ ...usage, cache_read_input_tokens: usage.cached_input_tokens });

export function encodeMessage(response: CanonicalResponse, usage: ResponseUsage): Message {
  const content: ContentBlock[] = [];
  for (const c of response.content) {
    if (c.type === 'text') content.push({ type: 'text', text: c.text });
    else if (c.type === 'tool_use') content.push({ type: 'tool_use', id: c.id, name: c.name, input: (c.input ?? {}) as Record<string, never> });
    else if (c.type === 'thinking') content.push({ type: 'thinking', thinking: c.thinking, signature: c.signature ?? '' });
  }
  return {
    id: response.id,
    type: 'message',
    role: 'assistant',
    model: response.model,
    content,
    stop_reason: response.stopReason,
    stop_sequence: response.stopSequence,
    usage: messagesUsage(usage),
  } as Message;
}

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function contentBlock(block: BlockStart): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: '' };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: {} };
    case 'thinking':
      return { type: 'thinking', thinking: '', signature: '' };
  }
}

/**
 * Stateful SSE encoder. Upstream block indices are renumbered densely from 0,
 * so a block the gateway drops never leaves a gap the client would trip on.
 */
export class MessagesStreamEncoder {
  private readonly indexMap = new Map<number, number>();

  start(id: string, model: string, usage: ResponseUsage): string {
    return (
      sse('message_start', {
        type: 'message_start',
        message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: messagesUsage(usage) },
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

  private delta(upstream: number, delta: Record<string, unknown>): string {
    return sse('content_block_delta', { type: 'content_block_delta', index: this.index(upstream), delta });
  }

  /** One canonical content event → its SSE text ('' for events with no wire form). */
  event(e: CanonicalEvent): string {
    switch (e.type) {
      case 'block_start':
        return sse('content_block_start', { type: 'content_block_start', index: this.index(e.index), content_block: contentBlock(e.block) });
      case 'text_delta':
        return this.delta(e.index, { type: 'text_delta', text: e.text });
      case 'tool_input_delta':
        return this.delta(e.index, { type: 'input_json_delta', partial_json: e.partialJson });
      case 'thinking_delta':
        return this.delta(e.index, { type: 'thinking_delta', thinking: e.text });
      case 'signature_delta':
        return this.delta(e.index, { type: 'signature_delta', signature: e.signature });
      case 'block_stop':
        return sse('content_block_stop', { type: 'content_block_stop', index: this.index(e.index) });
      case 'message_start':
      case 'usage':
      case 'message_stop':
        return '';
    }
  }

  /** `message_delta` carries cumulative usage (overwrite semantics), then `message_stop`. */
  finish(stopReason: StopReason, stopSequence: string | null, usage: ResponseUsage): string {
    return (
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage: messagesUsage(usage) }) +
      sse('message_stop', { type: 'message_stop' })
    );
  }

  error(error: AppError, requestId: string): string {
    return sse('error', errorBody('anthropic', error, requestId));
  }
}
