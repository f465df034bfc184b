// The reply side of the Anthropic Messages API: a plain message or a stream
// of events as canonical events. Every event, block and field the upstream
// sends is kept (`raw`) for the Messages encoder to relay on same-protocol
// calls. The request side is anthropic-request.mapper.ts.
import type { RawContentBlockDelta, RawMessageDeltaEvent, StopReason as AnthropicStopReason } from '@anthropic-ai/sdk/resources/messages';
import type { BlockStart, CanonicalEvent, MessageStopRaw, RawObject, StopReason, UpstreamUsage } from '../../core/canonical';
import { except } from '../raw-fields';
import { UpstreamError } from '../provider';
import { isRecord } from '../upstream-http';

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
  /** Newer API versions: the cache writes split by TTL. */
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  cache_read_input_tokens?: number | null;
  output_tokens?: number | null;
}

/** Usage fields the gateway replaces with its own (unified) counts; the rest are relayed. */
const OWNED_USAGE = new Set(['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens', 'cache_creation']);

/**
 * Anthropic usage is cumulative and newer API versions repeat the input and
 * cache fields in `message_delta`, so each field overwrites the last value
 * seen; the miss count is derived from the latest input and cache-creation
 * values together, whichever of them this event carried. Cache writes are
 * billed above plain input (1.25× for 5 minutes, 2× for an hour), so they are
 * also reported by TTL: the `cache_creation` split where the upstream sends
 * it, else all of `cache_creation_input_tokens` as 5-minute writes (the
 * default TTL).
 */
export class AnthropicUsageTracker {
  private input = 0;
  private cacheCreation = 0;
  private write5m = 0;
  private write1h = 0;
  /** Writes were reported: later events say how many there are now, even 0. */
  private wrote = false;

  apply(fields: AnthropicUsageFields | null | undefined): Partial<UpstreamUsage> | undefined {
    if (!fields) return undefined;
    const usage: Partial<UpstreamUsage> = {};
    if (typeof fields.cache_read_input_tokens === 'number') usage.inputCacheHit = fields.cache_read_input_tokens;
    const hasInput = typeof fields.input_tokens === 'number';
    const hasCreation = typeof fields.cache_creation_input_tokens === 'number';
    const split = fields.cache_creation;
    const hasSplit = split != null && (typeof split.ephemeral_5m_input_tokens === 'number' || typeof split.ephemeral_1h_input_tokens === 'number');
    if (typeof fields.input_tokens === 'number') this.input = fields.input_tokens;
    if (typeof fields.cache_creation_input_tokens === 'number') this.cacheCreation = fields.cache_creation_input_tokens;
    if (hasSplit) {
      this.write5m = typeof split.ephemeral_5m_input_tokens === 'number' ? split.ephemeral_5m_input_tokens : 0;
      this.write1h = typeof split.ephemeral_1h_input_tokens === 'number' ? split.ephemeral_1h_input_tokens : 0;
    }
    if (hasInput || hasCreation || hasSplit) {
      // A split that adds up to more than the total is believed over it: a write is never billed as less.
      const creation = Math.max(this.cacheCreation, this.write5m + this.write1h);
      usage.inputCacheMiss = this.input + creation;
      if (creation > 0 || this.wrote) {
        this.wrote = true;
        usage.cacheWrite5m = creation - this.write1h;
        usage.cacheWrite1h = this.write1h;
      }
    }
    if (typeof fields.output_tokens === 'number') usage.output = fields.output_tokens;
    return Object.keys(usage).length > 0 ? usage : undefined;
  }

  /** The usage event for `fields`, with the fields the gateway does not own kept as `extra`. */
  event(fields: unknown): CanonicalEvent | undefined {
    if (!isRecord(fields)) return undefined;
    const usage = this.apply(fields);
    const extra = except(fields, OWNED_USAGE);
    if (!usage && !extra) return undefined;
    return { type: 'usage', usage: usage ?? {}, ...(extra ? { extra } : {}) };
  }
}

/** Message fields the gateway sets itself (or carries as events); the rest are relayed. */
const OWNED_MESSAGE = new Set(['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage']);

function messageStart(message: RawObject): CanonicalEvent {
  const raw = except(message, OWNED_MESSAGE);
  return { type: 'message_start', id: String(message.id ?? ''), model: String(message.model ?? ''), ...(raw ? { raw } : {}) };
}

/** A plain (non-streamed) Messages reply as the same event sequence a stream gives. */
export function fromAnthropicMessage(body: unknown): CanonicalEvent[] {
  if (!isRecord(body) || typeof body.id !== 'string' || !Array.isArray(body.content)) {
    throw new UpstreamError('protocol', 'upstream reply is not an Anthropic message');
  }
  const events: CanonicalEvent[] = [messageStart(body)];
  body.content.forEach((block: unknown, index) => {
    if (isRecord(block)) for (const event of blockEvents(block, index)) events.push(event);
  });
  const usage = new AnthropicUsageTracker().event(body.usage);
  if (usage) events.push(usage);
  const raw: MessageStopRaw = typeof body.stop_reason === 'string' ? { stopReason: body.stop_reason } : {};
  events.push({
    type: 'message_stop',
    stopReason: toStopReason(body.stop_reason as string | null),
    stopSequence: typeof body.stop_sequence === 'string' ? body.stop_sequence : null,
    raw,
  });
  return events;
}

function blockEvents(block: RawObject, index: number): CanonicalEvent[] {
  switch (block.type) {
    case 'text':
      return [
        { type: 'block_start', index, block: { type: 'text', raw: block } },
        ...(typeof block.text === 'string' && block.text !== '' ? [{ type: 'text_delta' as const, index, text: block.text }] : []),
        { type: 'block_stop', index },
      ];
    case 'tool_use':
      return [
        { type: 'block_start', index, block: { type: 'tool_use', id: String(block.id ?? ''), name: String(block.name ?? ''), raw: block } },
        { type: 'tool_input_delta', index, partialJson: JSON.stringify(block.input ?? {}) },
        { type: 'block_stop', index },
      ];
    case 'thinking':
      return [
        { type: 'block_start', index, block: { type: 'thinking', raw: block } },
        ...(typeof block.thinking === 'string' && block.thinking !== '' ? [{ type: 'thinking_delta' as const, index, text: block.thinking }] : []),
        ...(typeof block.signature === 'string' && block.signature !== '' ? [{ type: 'signature_delta' as const, index, signature: block.signature }] : []),
        { type: 'block_stop', index },
      ];
    default:
      // Server tool calls and results, redacted thinking, kinds added later: relayed whole.
      return [
        { type: 'block_start', index, block: { type: 'other', raw: block } },
        { type: 'block_stop', index },
      ];
  }
}

/** A content_block_start's block as canonical, its initial content as deltas. */
function startEvents(block: RawObject, index: number): CanonicalEvent[] {
  let start: BlockStart;
  const events: CanonicalEvent[] = [];
  switch (block.type) {
    case 'text':
      start = { type: 'text', raw: block };
      if (typeof block.text === 'string' && block.text !== '') events.push({ type: 'text_delta', index, text: block.text });
      break;
    case 'thinking':
      start = { type: 'thinking', raw: block };
      if (typeof block.thinking === 'string' && block.thinking !== '') events.push({ type: 'thinking_delta', index, text: block.thinking });
      if (typeof block.signature === 'string' && block.signature !== '') events.push({ type: 'signature_delta', index, signature: block.signature });
      break;
    case 'tool_use': {
      start = { type: 'tool_use', id: String(block.id ?? ''), name: String(block.name ?? ''), raw: block };
      // Streams announce `input: {}` and send the JSON as deltas; only a
      // non-empty start input is content of its own.
      const input: unknown = block.input;
      if (isRecord(input) && Object.keys(input).length > 0) events.push({ type: 'tool_input_delta', index, partialJson: JSON.stringify(input) });
      break;
    }
    default:
      start = { type: 'other', raw: block };
  }
  return [{ type: 'block_start', index, block: start }, ...events];
}

/**
 * Incremental mapper for a streamed reply, fed one parsed SSE event at a
 * time. Every event is kept: known ones become canonical events, the rest
 * (pings, event and delta kinds added later) travel as raw ones, in order.
 */
export class AnthropicStreamMapper {
  private started = false;
  private stopped = false;
  private readonly blocks = new Set<number>();
  private stopReason: StopReason = 'end_turn';
  private stopSequence: string | null = null;
  private readonly stopRaw: MessageStopRaw = {};
  private readonly usage = new AnthropicUsageTracker();

  /** True once `message_stop` was mapped: the reply is complete. */
  get done(): boolean {
    return this.stopped;
  }

  push(eventName: string | undefined, payload: unknown): CanonicalEvent[] {
    const type = isRecord(payload) && typeof payload.type === 'string' ? payload.type : eventName;
    if (type === 'error') throw streamError(payload);
    if (!isRecord(payload)) throw new UpstreamError('protocol', `upstream sent a malformed ${type ?? 'event'}`);
    if (type !== 'message_start' && !this.started && isKnownEvent(type)) {
      throw new UpstreamError('protocol', `upstream sent ${type} before message_start`);
    }
    switch (type) {
      case 'message_start': {
        if (this.started) throw new UpstreamError('protocol', 'upstream sent a second message_start');
        this.started = true;
        const message = isRecord(payload.message) ? payload.message : {};
        const usage = this.usage.event(message.usage);
        return usage ? [messageStart(message), usage] : [messageStart(message)];
      }
      case 'content_block_start': {
        const index = numberOf(payload.index);
        if (!isRecord(payload.content_block) || index < 0) return [];
        this.blocks.add(index);
        return startEvents(payload.content_block, index);
      }
      case 'content_block_delta': {
        const index = numberOf(payload.index);
        return this.blocks.has(index) && isRecord(payload.delta) ? this.blockDelta(index, payload.delta as RawContentBlockDelta & RawObject) : [];
      }
      case 'content_block_stop': {
        const index = numberOf(payload.index);
        return this.blocks.has(index) ? [{ type: 'block_stop', index }] : [];
      }
      case 'message_delta':
        return this.messageDelta(payload as unknown as RawMessageDeltaEvent & RawObject);
      case 'message_stop':
        this.stopped = true;
        return [{ type: 'message_stop', stopReason: this.stopReason, stopSequence: this.stopSequence, raw: this.stopRaw }];
      default:
        // Pings and event kinds added after this adapter was written: relayed as sent.
        return [{ type: 'raw_event', event: type ?? 'message', data: payload }];
    }
  }

  private blockDelta(index: number, delta: RawContentBlockDelta & RawObject): CanonicalEvent[] {
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
        return [{ type: 'raw_delta', index, delta }];
    }
  }

  private messageDelta(event: RawMessageDeltaEvent & RawObject): CanonicalEvent[] {
    const delta = isRecord(event.delta) ? event.delta : undefined;
    if (delta?.stop_reason) {
      this.stopReason = toStopReason(delta.stop_reason);
      this.stopRaw.stopReason = delta.stop_reason;
    }
    if (delta && delta.stop_sequence !== undefined) this.stopSequence = delta.stop_sequence;
    const deltaExtra = delta ? except(delta, STOP_FIELDS) : undefined;
    if (deltaExtra) this.stopRaw.delta = { ...this.stopRaw.delta, ...deltaExtra };
    const eventExtra = except(event, DELTA_EVENT_FIELDS);
    if (eventExtra) this.stopRaw.event = { ...this.stopRaw.event, ...eventExtra };
    const usage = this.usage.event(event.usage);
    return usage ? [usage] : [];
  }
}

const STOP_FIELDS = new Set(['stop_reason', 'stop_sequence']);
const DELTA_EVENT_FIELDS = new Set(['type', 'delta', 'usage']);

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
