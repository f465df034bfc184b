// CanonicalEvents → the OpenAI Responses form: a Response object, or the
// Responses event stream (`response.created`, `response.in_progress`, per
// output item `response.output_item.added` … `response.output_item.done`,
// then `response.completed` or `response.incomplete` with usage), every event
// with an `event:` line and a `sequence_number`. Text blocks become message
// items, thinking blocks reasoning items (the signature is the encrypted
// content, when the caller asked for it), tool calls function_call items, or
// custom_tool_call items for free-text tools.
//
// From a Responses-speaking upstream (`relay`), a block's `raw` is
// `{item, part}`: the output item (and content or summary part) as the
// upstream started it. Its ids and fields are kept, consecutive blocks of one
// upstream item stay one item, other item kinds and unknown events go out as
// they came; only the response id, model, usage and guardrail edits change.
// The plain form is the same machine run without writing.
import type { AppError } from '../../errors';
import type { ResponseUsage } from '../../metering/tiers';
import type { BlockStart, CanonicalEvent, RawObject, StopReason } from '../../core/canonical';
import type { CollectedBlock } from '../collect-response';
import { isObject } from '../../core/json-edit';
import { errorBody } from '../http/error-envelopes';
import { FREEFORM_INPUT } from './responses.decoder';
import { responsesUsage, type ResponsesEncoderOptions } from './responses-object';

type StopEvent = Extract<CanonicalEvent, { type: 'message_stop' }>;

type ItemKind = 'message' | 'reasoning' | 'function_call' | 'custom_tool_call' | 'other';

interface Item {
  kind: ItemKind;
  outputIndex: number;
  /** The item as it stands; the final one once done. */
  value: RawObject;
  /** Started from an upstream's own item (relay): more of its parts may follow. */
  relayed?: boolean;
  /** A reasoning item's signature (encrypted content), kept for the stored output whether or not the client gets it. */
  signature?: string;
}

type PartKind = 'output_text' | 'refusal' | 'summary_text' | 'reasoning_text' | 'none';

interface Block {
  item: Item;
  part: PartKind;
  /** Index of the block's part in the item's content or summary list. */
  partIndex: number;
  partRaw: RawObject;
  text: string;
  signature: string;
  /** Relayed `other` item: its final form, when the upstream sent one. */
  final?: RawObject;
}

const sse = (type: string, data: RawObject): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/** The upstream's `{item, part}` convention (relay only). */
function relayRaw(raw: RawObject | undefined): { item?: RawObject; part?: RawObject } {
  if (!raw) return {};
  return { ...(isObject(raw.item) ? { item: raw.item } : {}), ...(isObject(raw.part) ? { part: raw.part } : {}) };
}

export class ResponsesEncoder {
  private sequence = 0;
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private readonly items: Item[] = [];
  private readonly blocks = new Map<number, Block>();
  /** A relayed item whose last part ended: more parts of it may follow. */
  private pending: Item | undefined;
  private echo: RawObject;
  private usageExtra: RawObject | undefined;
  private serial = 0;

  constructor(private readonly options: ResponsesEncoderOptions) {
    this.echo = options.echo;
  }

  private event(type: string, data: RawObject): string {
    return sse(type, { type, sequence_number: this.sequence++, ...data });
  }

  private newId(prefix: string): string {
    return `${prefix}_${this.options.id.replace(/^resp_/, '')}_${this.serial++}`;
  }

  private response(status: string, usage: ResponseUsage | null, extra: RawObject = {}): RawObject {
    return {
      ...this.echo,
      ...this.options.state,
      id: this.options.id,
      object: 'response',
      created_at: this.createdAt,
      status,
      error: null,
      incomplete_details: null,
      model: this.options.model,
      output: this.items.map((i) => i.value),
      usage: usage === null ? null : responsesUsage(usage, this.usageExtra),
      ...extra,
    };
  }

  start(): string {
    const response = this.response('in_progress', null);
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private addItem(kind: ItemKind, value: RawObject): [Item, string] {
    const item: Item = { kind, outputIndex: this.items.length, value };
    this.items.push(item);
    return [item, this.event('response.output_item.added', { output_index: item.outputIndex, item: value })];
  }

  private doneItem(item: Item): string {
    if (item.kind !== 'other') item.value = { ...item.value, ...('status' in item.value || item.kind !== 'reasoning' ? { status: 'completed' } : {}) };
    return this.event('response.output_item.done', { output_index: item.outputIndex, item: item.value });
  }

  private closePending(): string {
    const pending = this.pending;
    this.pending = undefined;
    return pending ? this.doneItem(pending) : '';
  }

  /** The relayed item a block continues (same upstream item id), or a new one. */
  private itemFor(kind: 'message' | 'reasoning', raw: RawObject | undefined, fresh: () => RawObject): [Item, string] {
    const { item } = relayRaw(raw);
    if (this.options.relay && item && this.pending?.kind === kind && this.pending.value.id === item.id) {
      const continued = this.pending;
      this.pending = undefined;
      return [continued, ''];
    }
    const closed = this.closePending();
    const relayed = this.options.relay && item !== undefined;
    const value = relayed ? { ...item, ...(kind === 'message' ? { content: [] } : { summary: [] }) } : fresh();
    const [added, text] = this.addItem(kind, value);
    if (relayed) added.relayed = true;
    return [added, closed + text];
  }

  private toolName(name: string): { name: string; namespace?: string; freeform: boolean } {
    const tool = this.options.tools.find((t) => t.name === name);
    if (!tool) return { name, freeform: false };
    const own = tool.namespace !== undefined && typeof tool.raw?.name === 'string' ? tool.raw.name : name;
    return { name: own, ...(tool.namespace !== undefined ? { namespace: tool.namespace } : {}), freeform: tool.freeform === true };
  }

  private blockStart(index: number, block: BlockStart): string {
    const raw = this.options.relay ? block.raw : undefined;
    switch (block.type) {
      case 'text': {
        const [item, out] = this.itemFor('message', raw, () => ({ id: this.newId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] }));
        const own = relayRaw(raw).part;
        const part: PartKind = own?.type === 'refusal' ? 'refusal' : 'output_text';
        const partRaw: RawObject = part === 'refusal' ? { ...own, type: 'refusal', refusal: '' } : { annotations: [], ...own, type: 'output_text', text: '' };
        const content = item.value.content as RawObject[];
        const state: Block = { item, part, partIndex: content.length, partRaw, text: '', signature: '' };
        content.push(partRaw);
        this.blocks.set(index, state);
        return out + this.event('response.content_part.added', { ...this.at(state), content_index: state.partIndex, part: partRaw });
      }
      case 'thinking': {
        const [item, out] = this.itemFor('reasoning', raw, () => ({ id: this.newId('rs'), type: 'reasoning', summary: [] }));
        const own = raw ? relayRaw(raw).part : { type: 'summary_text' };
        const part: PartKind = own === undefined ? 'none' : own.type === 'reasoning_text' ? 'reasoning_text' : 'summary_text';
        const state: Block = { item, part, partIndex: 0, partRaw: { ...own, type: part, text: '' }, text: '', signature: '' };
        this.blocks.set(index, state);
        if (part === 'summary_text') {
          const summary = item.value.summary as RawObject[];
          state.partIndex = summary.length;
          summary.push(state.partRaw);
          return out + this.event('response.reasoning_summary_part.added', { ...this.at(state), summary_index: state.partIndex, part: state.partRaw });
        }
        if (part === 'reasoning_text') {
          const content = (item.value.content ??= []) as RawObject[];
          state.partIndex = content.length;
          content.push(state.partRaw);
          return out + this.event('response.content_part.added', { ...this.at(state), content_index: state.partIndex, part: state.partRaw });
        }
        return out;
      }
      case 'tool_use': {
        const closed = this.closePending();
        const relayed = relayRaw(raw).item;
        let value: RawObject;
        if (relayed) value = { ...relayed, status: 'in_progress', ...(relayed.type === 'custom_tool_call' ? { input: '' } : { arguments: '' }) };
        else {
          const { name, namespace, freeform } = this.toolName(block.name);
          const common = { call_id: block.id, name, ...(namespace !== undefined ? { namespace } : {}) };
          value = freeform
            ? { id: this.newId('ctc'), type: 'custom_tool_call', status: 'in_progress', ...common, input: '' }
            : { id: this.newId('fc'), type: 'function_call', status: 'in_progress', ...common, arguments: '' };
        }
        const [item, out] = this.addItem(value.type === 'custom_tool_call' ? 'custom_tool_call' : 'function_call', value);
        this.blocks.set(index, { item, part: 'none', partIndex: 0, partRaw: {}, text: '', signature: '' });
        return closed + out;
      }
      case 'other': {
        if (!this.options.relay) return '';
        const closed = this.closePending();
        const [item, out] = this.addItem('other', block.raw);
        this.blocks.set(index, { item, part: 'none', partIndex: 0, partRaw: {}, text: '', signature: '' });
        return closed + out;
      }
    }
  }

  private at(block: Block): RawObject {
    return { item_id: block.item.value.id, output_index: block.item.outputIndex };
  }

  private delta(block: Block, text: string): string {
    block.text += text;
    switch (block.item.kind) {
      case 'message':
        return block.part === 'refusal'
          ? this.event('response.refusal.delta', { ...this.at(block), content_index: block.partIndex, delta: text })
          : this.event('response.output_text.delta', { ...this.at(block), content_index: block.partIndex, delta: text, logprobs: [] });
      case 'reasoning':
        if (block.part === 'summary_text') return this.event('response.reasoning_summary_text.delta', { ...this.at(block), summary_index: block.partIndex, delta: text });
        if (block.part === 'reasoning_text') return this.event('response.reasoning_text.delta', { ...this.at(block), content_index: block.partIndex, delta: text });
        return '';
      case 'function_call':
        return this.event('response.function_call_arguments.delta', { ...this.at(block), delta: text });
      case 'custom_tool_call':
        // The input arrives as the JSON `{"input": …}` (canonical tool input): it is unwrapped when the call ends.
        return '';
      case 'other':
        return '';
    }
  }

  private blockStop(block: Block): string {
    const { item } = block;
    const value = item.value;
    switch (item.kind) {
      case 'message': {
        const key = block.part === 'refusal' ? 'refusal' : 'text';
        const part = { ...block.partRaw, [key]: block.text };
        (value.content as RawObject[])[block.partIndex] = part;
        const done =
          block.part === 'refusal'
            ? this.event('response.refusal.done', { ...this.at(block), content_index: block.partIndex, refusal: block.text })
            : this.event('response.output_text.done', { ...this.at(block), content_index: block.partIndex, text: block.text, logprobs: [] });
        return done + this.event('response.content_part.done', { ...this.at(block), content_index: block.partIndex, part }) + this.settle(item);
      }
      case 'reasoning': {
        let out = '';
        const part = { ...block.partRaw, text: block.text };
        if (block.part === 'summary_text') {
          (value.summary as RawObject[])[block.partIndex] = part;
          out += this.event('response.reasoning_summary_text.done', { ...this.at(block), summary_index: block.partIndex, text: block.text });
          out += this.event('response.reasoning_summary_part.done', { ...this.at(block), summary_index: block.partIndex, part });
        } else if (block.part === 'reasoning_text') {
          (value.content as RawObject[])[block.partIndex] = part;
          out += this.event('response.reasoning_text.done', { ...this.at(block), content_index: block.partIndex, text: block.text });
          out += this.event('response.content_part.done', { ...this.at(block), content_index: block.partIndex, part });
        }
        if (block.signature !== '') {
          item.signature = block.signature;
          // A relayed upstream's too: the gateway may have asked for it for the stored copy only (keepReasoning).
          if (this.options.encryptedReasoning) value.encrypted_content = block.signature;
        }
        return out + this.settle(item);
      }
      case 'function_call': {
        const args = block.text === '' ? '{}' : block.text;
        value.arguments = args;
        return this.event('response.function_call_arguments.done', { ...this.at(block), name: value.name, arguments: args }) + this.doneItem(item);
      }
      case 'custom_tool_call': {
        const input = freeformInput(block.text);
        value.input = input;
        return (
          this.event('response.custom_tool_call_input.delta', { ...this.at(block), delta: input }) +
          this.event('response.custom_tool_call_input.done', { ...this.at(block), input }) +
          this.doneItem(item)
        );
      }
      case 'other':
        if (block.final) item.value = block.final;
        return this.doneItem(item);
    }
  }

  /** A relayed message or reasoning item may have more parts: it ends when another item starts. */
  private settle(item: Item): string {
    if (!item.relayed) return this.doneItem(item);
    this.pending = item;
    return '';
  }

  /** One canonical event → its SSE text ('' for events with no wire form of their own). */
  push(e: CanonicalEvent): string {
    switch (e.type) {
      case 'block_start':
        return this.blockStart(e.index, e.block);
      case 'text_delta':
      case 'thinking_delta': {
        const block = this.blocks.get(e.index);
        return block ? this.delta(block, e.text) : '';
      }
      case 'tool_input_delta': {
        const block = this.blocks.get(e.index);
        return block ? this.delta(block, e.partialJson) : '';
      }
      case 'signature_delta': {
        const block = this.blocks.get(e.index);
        if (block) block.signature += e.signature;
        return '';
      }
      case 'raw_delta': {
        const block = this.blocks.get(e.index);
        if (block && block.item.kind === 'other' && this.options.relay) block.final = e.delta;
        return '';
      }
      case 'block_stop': {
        const block = this.blocks.get(e.index);
        if (!block) return '';
        this.blocks.delete(e.index);
        return this.blockStop(block);
      }
      case 'raw_event':
        return this.options.relay ? this.rawEvent(e.event, e.data) : '';
      case 'message_start':
        if (this.options.relay && e.raw) this.echo = e.raw;
        return '';
      case 'usage':
        if (this.options.relay && e.extra) this.usageExtra = { ...this.usageExtra, ...e.extra };
        return '';
      case 'message_stop':
        return '';
    }
  }

  /** An upstream event the gateway has no canonical form for, as sent (its sequence number renumbered). */
  private rawEvent(type: string, data: RawObject): string {
    if (type === 'response.output_text.annotation.added' && isObject(data.annotation)) {
      for (const block of this.blocks.values()) {
        if (block.item.outputIndex === data.output_index && block.partIndex === data.content_index && block.part === 'output_text') {
          const annotations = Array.isArray(block.partRaw.annotations) ? block.partRaw.annotations : [];
          block.partRaw = { ...block.partRaw, annotations: [...annotations, data.annotation] };
        }
      }
    }
    const { sequence_number: _sequence, type: _type, ...rest } = data;
    return this.event(type, rest);
  }

  /** Closes what is still open, then `response.completed` (or `response.incomplete`) with the final usage. */
  finish(stop: StopEvent, usage: ResponseUsage): string {
    let out = '';
    for (const [index, block] of [...this.blocks]) {
      this.blocks.delete(index);
      out += this.blockStop(block);
    }
    out += this.closePending();
    if (this.options.relay && stop.raw?.event) this.echo = { ...this.echo, ...stop.raw.event };
    const response = this.finalResponse(stop.stopReason, usage);
    this.options.onFinal?.(response, this.keptOutput());
    return out + this.event(response.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  /** The output items as kept for a follow-up: encrypted reasoning as the upstream returned it, asked for or not. */
  private keptOutput(): RawObject[] {
    return this.items.map((i) => (i.signature !== undefined && i.value.encrypted_content === undefined ? { ...i.value, encrypted_content: i.signature } : i.value));
  }

  finalResponse(stop: StopReason, usage: ResponseUsage): RawObject & { status: string } {
    const reason = stop === 'max_tokens' ? 'max_output_tokens' : stop === 'refusal' ? 'content_filter' : undefined;
    const status = reason === undefined ? 'completed' : 'incomplete';
    return { ...this.response(status, usage, reason === undefined ? {} : { incomplete_details: { reason } }), status };
  }

  /** A failure after the stream began: an `error` event (the OpenAI client throws it), then `response.failed`. */
  error(error: AppError, requestId: string): string {
    const body = errorBody('openai', error, requestId) as { error: RawObject };
    const failed = this.response('failed', null, { error: { code: error.code, message: error.message } });
    return this.event('error', { ...body.error, error: body.error }) + this.event('response.failed', { response: failed });
  }
}

/** A translated free-text tool call's input: the `input` of the function's JSON arguments. */
function freeformInput(json: string): string {
  try {
    const parsed: unknown = JSON.parse(json);
    if (isObject(parsed) && typeof parsed[FREEFORM_INPUT] === 'string') return parsed[FREEFORM_INPUT];
  } catch {
    // Not JSON: the model wrote the text itself.
  }
  return json;
}

/** The plain form: the collected blocks run through the same machine, nothing written. */
export function encodeResponse(options: ResponsesEncoderOptions, blocks: readonly CollectedBlock[], stop: StopReason, usage: ResponseUsage, usageExtra?: RawObject): RawObject {
  const encoder = new ResponsesEncoder(options);
  if (usageExtra) encoder.push({ type: 'usage', usage: {}, extra: usageExtra });
  blocks.forEach(({ content, raw }, index) => {
    switch (content.type) {
      case 'text':
        encoder.push({ type: 'block_start', index, block: { type: 'text', ...(raw ? { raw } : {}) } });
        encoder.push({ type: 'text_delta', index, text: content.text });
        break;
      case 'thinking':
        encoder.push({ type: 'block_start', index, block: { type: 'thinking', ...(raw ? { raw } : {}) } });
        encoder.push({ type: 'thinking_delta', index, text: content.thinking });
        if (content.signature) encoder.push({ type: 'signature_delta', index, signature: content.signature });
        break;
      case 'tool_use':
        encoder.push({ type: 'block_start', index, block: { type: 'tool_use', id: content.id, name: content.name, ...(raw ? { raw } : {}) } });
        encoder.push({ type: 'tool_input_delta', index, partialJson: typeof content.input === 'string' ? content.input : JSON.stringify(content.input ?? {}) });
        break;
      case 'other':
        encoder.push({ type: 'block_start', index, block: { type: 'other', raw: content.raw } });
        break;
      default:
        return;
    }
    encoder.push({ type: 'block_stop', index });
  });
  encoder.finish({ type: 'message_stop', stopReason: stop }, usage);
  return encoder.finalResponse(stop, usage);
}
