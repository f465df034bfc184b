// The reply side of the OpenAI Responses API (OpenAI, and compatible servers
// that speak it): a Response object or its event stream as canonical events,
// for Responses-form calls that pass through. Each message content part,
// reasoning summary (or reasoning text) part and tool call becomes a block;
// the upstream's own item and part travel as the block's raw `{item, part}`
// so the Responses encoder relays them; other item kinds are `other` blocks
// and events the gateway has no canonical form for are raw events. A
// reasoning item's encrypted content is its thinking signature. Usage:
// `input_tokens` counts cached tokens, `input_tokens_details.cached_tokens`
// is the cache hit.
import type { CanonicalEvent, RawObject, StopReason, UpstreamUsage } from '../../core/canonical';
import { except } from '../raw-fields';
import { UpstreamError } from '../provider';
import { isRecord } from '../upstream-http';

/** Response-object fields the gateway owns; the rest (echoed request fields, `service_tier`, …) are relayed. */
const OWNED_RESPONSE = new Set(['id', 'object', 'created_at', 'status', 'model', 'output', 'output_text', 'usage', 'error', 'incomplete_details']);
const OWNED_USAGE = new Set(['input_tokens', 'input_tokens_details', 'output_tokens', 'total_tokens']);
/** An item's streamed text fields: they arrive as deltas (and are guardrail-checked), so the item's raw form leaves them out. */
const ITEM_TEXT = new Set(['content', 'summary', 'arguments', 'input', 'encrypted_content']);
const PART_TEXT = new Set(['text', 'refusal']);

/** How a namespaced function is named for the canonical view (as the Responses decoder names it). */
const flatName = (item: RawObject): string =>
  typeof item.namespace === 'string' && item.namespace !== '' ? `${item.namespace}__${String(item.name)}` : String(item.name ?? '');

/** A free-text tool's input as canonical tool input, `{"input": …}`, in streamable pieces. */
const FREEFORM_OPEN = '{"input":"';
const FREEFORM_CLOSE = '"}';
const escapeJsonText = (text: string): string => JSON.stringify(text).slice(1, -1);

/** The figures the upstream reported; a side it left out stays absent, so metering counts it locally rather than as 0. */
function usageEvent(usage: unknown): CanonicalEvent[] {
  if (!isRecord(usage)) return [];
  const reported: Partial<UpstreamUsage> = {};
  if (typeof usage.input_tokens === 'number') {
    const details = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
    const hit = typeof details.cached_tokens === 'number' ? details.cached_tokens : 0;
    reported.inputCacheHit = hit;
    reported.inputCacheMiss = Math.max(0, usage.input_tokens - hit);
  }
  if (typeof usage.output_tokens === 'number') reported.output = usage.output_tokens;
  const extra = except(usage, OWNED_USAGE);
  return [{ type: 'usage', usage: reported, ...(extra ? { extra } : {}) }];
}

function messageStart(response: RawObject): CanonicalEvent {
  const raw = except(response, OWNED_RESPONSE);
  return { type: 'message_start', id: String(response.id ?? ''), model: String(response.model ?? ''), ...(raw ? { raw } : {}) };
}

function stopReason(response: RawObject, calledTools: boolean): StopReason {
  if (response.status === 'incomplete') {
    const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return reason === 'content_filter' ? 'refusal' : 'max_tokens';
  }
  return calledTools ? 'tool_use' : 'end_turn';
}

function messageStop(response: RawObject, calledTools: boolean): CanonicalEvent {
  const event = except(response, OWNED_RESPONSE);
  const detail = isRecord(response.incomplete_details) && typeof response.incomplete_details.reason === 'string' ? `:${response.incomplete_details.reason}` : '';
  return {
    type: 'message_stop',
    stopReason: stopReason(response, calledTools),
    raw: { stopReason: `${String(response.status ?? 'completed')}${detail}`, ...(event ? { event } : {}) },
  };
}

function failure(error: unknown, fallback: string): UpstreamError {
  const detail = isRecord(error) ? error : {};
  const message = typeof detail.message === 'string' ? detail.message : fallback;
  const code = typeof detail.code === 'string' ? detail.code : typeof detail.type === 'string' ? detail.type : undefined;
  return new UpstreamError('protocol', message, undefined, code);
}

const DELTA = '.delta';
const DONE = '.done';

/** One text stream: its kind (the event type without `.delta` / `.done`) at one place (item, output and content index). */
const streamKey = (kind: string, data: RawObject): string =>
  `${kind} ${String(data.item_id ?? '')} ${String(data.output_index ?? '')} ${String(data.content_index ?? '')}`;

const isToolCall = (item: RawObject): boolean => item.type === 'function_call' || item.type === 'custom_tool_call';

/** A plain Response as the same event sequence a stream gives. */
export function fromResponsesJson(body: unknown): CanonicalEvent[] {
  if (!isRecord(body) || !Array.isArray(body.output)) {
    if (isRecord(body) && isRecord(body.error)) throw failure(body.error, 'upstream error');
    throw new UpstreamError('protocol', 'upstream reply is not a Response');
  }
  if (body.status === 'failed') throw failure(body.error, 'upstream response failed');
  const events: CanonicalEvent[] = [messageStart(body)];
  let index = 0;
  const block = (start: Extract<CanonicalEvent, { type: 'block_start' }>['block'], ...deltas: CanonicalEvent[]): void => {
    events.push({ type: 'block_start', index, block: start });
    for (const delta of deltas) events.push(delta);
    events.push({ type: 'block_stop', index });
    index++;
  };
  for (const item of body.output as unknown[]) {
    if (!isRecord(item)) continue;
    const raw = except(item, ITEM_TEXT) ?? {};
    switch (item.type) {
      case 'message':
        for (const part of Array.isArray(item.content) ? item.content : []) {
          if (!isRecord(part)) continue;
          const text = typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '';
          block({ type: 'text', raw: { item: raw, part: except(part, PART_TEXT) ?? {} } }, ...(text ? [{ type: 'text_delta', index, text } as const] : []));
        }
        break;
      case 'reasoning': {
        const summary = (Array.isArray(item.summary) ? item.summary : []).filter(isRecord);
        const content = (Array.isArray(item.content) ? item.content : []).filter(isRecord);
        const parts: RawObject[] = [...summary, ...content.map((p): RawObject => ({ ...p, type: 'reasoning_text' }))];
        const signature = typeof item.encrypted_content === 'string' && item.encrypted_content !== '' ? item.encrypted_content : undefined;
        if (parts.length === 0) {
          block({ type: 'thinking', raw: { item: raw } }, ...(signature ? [{ type: 'signature_delta', index, signature } as const] : []));
        }
        parts.forEach((part, i) => {
          const text = typeof part.text === 'string' ? part.text : '';
          const last = i === parts.length - 1 && signature !== undefined;
          block(
            { type: 'thinking', raw: { item: raw, part: except(part, PART_TEXT) ?? {} } },
            ...(text ? [{ type: 'thinking_delta', index, text } as const] : []),
            ...(last ? [{ type: 'signature_delta', index, signature } as const] : []),
          );
        });
        break;
      }
      case 'function_call':
      case 'custom_tool_call': {
        const input =
          item.type === 'function_call'
            ? typeof item.arguments === 'string' && item.arguments !== ''
              ? item.arguments
              : '{}'
            : `${FREEFORM_OPEN}${escapeJsonText(String(item.input ?? ''))}${FREEFORM_CLOSE}`;
        block({ type: 'tool_use', id: String(item.call_id ?? ''), name: flatName(item), raw: { item: raw } }, { type: 'tool_input_delta', index, partialJson: input });
        break;
      }
      default:
        block({ type: 'other', raw: item });
    }
  }
  for (const usage of usageEvent(body.usage)) events.push(usage);
  events.push(messageStop(body, (body.output as unknown[]).some((i) => isRecord(i) && isToolCall(i))));
  return events;
}

interface OpenItem {
  item: RawObject;
  /** Canonical block of the item's open part (or of the tool call itself). */
  block?: number;
  /** Canonical block per content index (message parts). */
  parts: Map<number, number>;
  /** Text the item's deltas carried (a tool call's arguments), to fill in what a server sent only at the end. */
  streamed: string;
}

/**
 * Incremental mapper for a Responses event stream, fed one parsed event at a
 * time; `done` once `response.completed` (or `response.incomplete`) was seen.
 * Items arrive one after another, as the API sends them.
 */
export class ResponsesStreamMapper {
  private started = false;
  private finished = false;
  private nextIndex = 0;
  private calledTools = false;
  private readonly items = new Map<number, OpenItem>();
  /** Text streamed in delta events of kinds without a canonical form (a hosted tool's code or arguments): stream id per kind and place. */
  private readonly streams = new Map<string, { id: number; outputIndex: number }>();

  get done(): boolean {
    return this.finished;
  }

  push(data: unknown): CanonicalEvent[] {
    if (!isRecord(data)) throw new UpstreamError('protocol', 'upstream sent a malformed event');
    const type = typeof data.type === 'string' ? data.type : '';
    const events: CanonicalEvent[] = [];
    if (type === 'error') throw failure(data, 'upstream stream error');
    if (type === 'response.failed') throw failure(isRecord(data.response) ? data.response.error : undefined, 'upstream response failed');
    if (!this.started) {
      if (type !== 'response.created' && type !== 'response.queued' && type !== 'response.in_progress') {
        throw new UpstreamError('protocol', `upstream stream began with ${type || 'an untyped event'}, not response.created`);
      }
      this.started = true;
      events.push(messageStart(isRecord(data.response) ? data.response : {}));
      return events;
    }
    const outputIndex = typeof data.output_index === 'number' ? data.output_index : -1;
    const open = this.items.get(outputIndex);
    switch (type) {
      case 'response.created':
      case 'response.queued':
      case 'response.in_progress':
      case 'keepalive':
        break;
      case 'response.output_item.added':
        this.itemAdded(outputIndex, isRecord(data.item) ? data.item : {}, events);
        break;
      case 'response.content_part.added':
      case 'response.reasoning_summary_part.added':
        if (open) this.partAdded(open, type === 'response.content_part.added' ? Number(data.content_index) : -1, isRecord(data.part) ? data.part : {}, events);
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const index = open?.parts.get(Number(data.content_index));
        if (index !== undefined && typeof data.delta === 'string' && data.delta !== '') events.push({ type: 'text_delta', index, text: data.delta });
        break;
      }
      case 'response.content_part.done':
        if (open && open.item.type === 'message') {
          const index = open.parts.get(Number(data.content_index));
          if (index !== undefined) {
            events.push({ type: 'block_stop', index });
            open.parts.delete(Number(data.content_index));
          }
        }
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (open?.block !== undefined && typeof data.delta === 'string' && data.delta !== '') events.push({ type: 'thinking_delta', index: open.block, text: data.delta });
        break;
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta':
        if (open?.block !== undefined && typeof data.delta === 'string' && data.delta !== '') {
          open.streamed += data.delta;
          const partialJson = type === 'response.custom_tool_call_input.delta' ? escapeJsonText(data.delta) : data.delta;
          events.push({ type: 'tool_input_delta', index: open.block, partialJson });
        }
        break;
      case 'response.output_item.done':
        this.endStreams(outputIndex, events);
        if (open) this.itemDone(outputIndex, open, isRecord(data.item) ? data.item : open.item, events);
        break;
      case 'response.completed':
      case 'response.incomplete': {
        const response = isRecord(data.response) ? data.response : {};
        this.endStreams(null, events);
        for (const [index, item] of [...this.items]) this.itemDone(index, item, item.item, events);
        for (const usage of usageEvent(response.usage)) events.push(usage);
        events.push(messageStop(response, this.calledTools));
        this.finished = true;
        break;
      }
      case 'response.output_text.done':
      case 'response.refusal.done':
      case 'response.reasoning_summary_text.done':
      case 'response.reasoning_summary_part.done':
      case 'response.reasoning_text.done':
      case 'response.function_call_arguments.done':
      case 'response.custom_tool_call_input.done':
        // The deltas already carried the text; items close at output_item.done.
        break;
      default:
        this.unknownEvent(type, data, outputIndex, events);
    }
    return events;
  }

  /**
   * An event kind the gateway has no canonical form for, relayed as sent. A
   * `….delta` with a text `delta` (`response.code_interpreter_call_code.delta`,
   * `response.mcp_call_arguments.delta`, kinds added later) is a piece of a
   * text stream, so output guardrails read its pieces as one text; its
   * `….done`, or the end of its item, ends the stream before going out.
   */
  private unknownEvent(type: string, data: RawObject, outputIndex: number, events: CanonicalEvent[]): void {
    const delta = type.endsWith(DELTA) && typeof data.delta === 'string';
    const done = type.endsWith(DONE);
    if (delta || done) {
      const key = streamKey(type.slice(0, -(delta ? DELTA : DONE).length), data);
      let stream = this.streams.get(key);
      if (delta) {
        if (stream === undefined) {
          stream = { id: this.nextIndex++, outputIndex };
          this.streams.set(key, stream);
        }
        events.push({ type: 'raw_event', event: type, data, textStream: { id: stream.id, field: 'delta' } });
        return;
      }
      if (stream !== undefined) {
        this.streams.delete(key);
        events.push({ type: 'block_stop', index: stream.id });
      }
    }
    events.push({ type: 'raw_event', event: type, data });
  }

  /** Ends the text streams of one output item (all of them for null). */
  private endStreams(outputIndex: number | null, events: CanonicalEvent[]): void {
    for (const [key, stream] of this.streams) {
      if (outputIndex !== null && stream.outputIndex !== outputIndex) continue;
      this.streams.delete(key);
      events.push({ type: 'block_stop', index: stream.id });
    }
  }

  private open(block: Extract<CanonicalEvent, { type: 'block_start' }>['block'], events: CanonicalEvent[]): number {
    const index = this.nextIndex++;
    events.push({ type: 'block_start', index, block });
    return index;
  }

  private itemAdded(outputIndex: number, item: RawObject, events: CanonicalEvent[]): void {
    const open: OpenItem = { item, parts: new Map(), streamed: '' };
    this.items.set(outputIndex, open);
    const raw = except(item, ITEM_TEXT) ?? {};
    if (isToolCall(item)) {
      this.calledTools = true;
      open.block = this.open({ type: 'tool_use', id: String(item.call_id ?? ''), name: flatName(item), raw: { item: raw } }, events);
      if (item.type === 'custom_tool_call') events.push({ type: 'tool_input_delta', index: open.block, partialJson: FREEFORM_OPEN });
    } else if (item.type !== 'message' && item.type !== 'reasoning') {
      open.block = this.open({ type: 'other', raw: item }, events);
    }
  }

  /** A message content part, or a reasoning summary (`contentIndex` -1) or reasoning-text part. */
  private partAdded(open: OpenItem, contentIndex: number, part: RawObject, events: CanonicalEvent[]): void {
    const raw = { item: except(open.item, ITEM_TEXT) ?? {}, part: except(part, PART_TEXT) ?? {} };
    const text = typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '';
    if (open.item.type === 'message') {
      const index = this.open({ type: 'text', raw }, events);
      open.parts.set(contentIndex, index);
      if (text) events.push({ type: 'text_delta', index, text });
    } else if (open.item.type === 'reasoning') {
      // One reasoning part ends where the next begins: the last one waits for the item's encrypted content.
      if (open.block !== undefined) events.push({ type: 'block_stop', index: open.block });
      open.block = this.open({ type: 'thinking', raw }, events);
      if (text) events.push({ type: 'thinking_delta', index: open.block, text });
    }
  }

  private itemDone(outputIndex: number, open: OpenItem, item: RawObject, events: CanonicalEvent[]): void {
    this.items.delete(outputIndex);
    switch (item.type) {
      case 'message':
        for (const index of open.parts.values()) events.push({ type: 'block_stop', index });
        return;
      case 'reasoning': {
        open.block ??= this.open({ type: 'thinking', raw: { item: except(open.item, ITEM_TEXT) ?? {} } }, events);
        if (typeof item.encrypted_content === 'string' && item.encrypted_content !== '') {
          events.push({ type: 'signature_delta', index: open.block, signature: item.encrypted_content });
        }
        events.push({ type: 'block_stop', index: open.block });
        return;
      }
      case 'function_call':
      case 'custom_tool_call': {
        if (open.block === undefined) return;
        // Some servers send the whole call only when it ends.
        const whole = item.type === 'function_call' ? item.arguments : item.input;
        if (open.streamed === '' && typeof whole === 'string' && whole !== '') {
          events.push({ type: 'tool_input_delta', index: open.block, partialJson: item.type === 'function_call' ? whole : escapeJsonText(whole) });
        }
        if (item.type === 'custom_tool_call') events.push({ type: 'tool_input_delta', index: open.block, partialJson: FREEFORM_CLOSE });
        events.push({ type: 'block_stop', index: open.block });
        return;
      }
      default:
        if (open.block === undefined) return;
        events.push({ type: 'raw_delta', index: open.block, delta: item }, { type: 'block_stop', index: open.block });
    }
  }
}
