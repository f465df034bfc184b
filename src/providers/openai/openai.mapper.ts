// The reply side of OpenAI Chat Completions, as spoken by OpenAI and the
// compatible servers (DeepSeek, Qwen, vLLM, Ollama): a completion or a stream
// of chunks as canonical events, the fields beyond the canonical ones kept
// for relay to chat clients. Wire types are the official SDK's (type-only
// imports); fields only compatible servers send (`reasoning_content`,
// DeepSeek's cache counters) are added where they are read. The request side
// is openai-request.mapper.ts.
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { CanonicalEvent, RawObject, StopReason, UpstreamUsage } from '../../core/canonical';
import { except } from '../raw-fields';
import { UpstreamError } from '../provider';
import { isRecord } from '../upstream-http';

export function toStopReason(finish: string | null | undefined): StopReason {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** DeepSeek reports its prefix cache in its own fields beside the OpenAI ones. */
type WireUsage = CompletionUsage & { prompt_cache_hit_tokens?: number };

/**
 * The figures the upstream reported: a side it left out (some compatible
 * servers send `usage` with only one of them) stays absent, so metering
 * counts that side locally instead of billing it as 0.
 */
export function toUsage(usage: WireUsage): Partial<UpstreamUsage> {
  const out: Partial<UpstreamUsage> = {};
  if (typeof usage.prompt_tokens === 'number') {
    const hit = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0;
    out.inputCacheHit = hit;
    out.inputCacheMiss = Math.max(0, usage.prompt_tokens - hit);
  }
  if (typeof usage.completion_tokens === 'number') out.output = usage.completion_tokens;
  return out;
}

/** Usage fields the gateway replaces with its own counts; the rest (e.g. `completion_tokens_details`) are relayed. */
const OWNED_USAGE = new Set(['prompt_tokens', 'completion_tokens', 'total_tokens', 'prompt_tokens_details', 'prompt_cache_hit_tokens', 'prompt_cache_miss_tokens']);
const OWNED_COMPLETION = new Set(['id', 'object', 'created', 'model', 'choices', 'usage']);
const MAPPED_MESSAGE = new Set(['role', 'content', 'refusal', 'tool_calls', 'reasoning_content', 'reasoning']);
const MAPPED_CHOICE = new Set(['index', 'message', 'delta', 'finish_reason']);

function usageEvent(usage: WireUsage & RawObject): CanonicalEvent {
  const extra = except(usage, OWNED_USAGE);
  return { type: 'usage', usage: toUsage(usage), ...(extra ? { extra } : {}) };
}

function messageStart(completion: RawObject): CanonicalEvent {
  const raw = except(completion, OWNED_COMPLETION);
  return { type: 'message_start', id: String(completion.id ?? ''), model: String(completion.model ?? ''), ...(raw ? { raw } : {}) };
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Reasoning text as DeepSeek/Qwen (`reasoning_content`) or vLLM/OpenRouter (`reasoning`) send it. */
function reasoningOf(value: Record<string, unknown>): string | undefined {
  return nonEmpty(value.reasoning_content) ?? nonEmpty(value.reasoning);
}

/** A plain (non-streamed) completion as the same event sequence a stream gives. */
export function fromOpenAiCompletion(body: unknown): CanonicalEvent[] {
  if (!isRecord(body) || !Array.isArray(body.choices)) {
    if (isRecord(body) && isRecord(body.error)) throw errorInBody(body.error);
    throw new UpstreamError('protocol', 'upstream reply is not a chat completion');
  }
  const completion = body as unknown as ChatCompletion;
  const events: CanonicalEvent[] = [messageStart(body)];
  const choice = completion.choices.find((c) => c.index === 0) ?? completion.choices[0];
  const message = choice?.message;
  let index = 0;
  if (message) {
    const reasoning = reasoningOf(message as unknown as Record<string, unknown>);
    if (reasoning !== undefined) {
      events.push(
        { type: 'block_start', index, block: { type: 'thinking' } },
        { type: 'thinking_delta', index, text: reasoning },
        { type: 'block_stop', index },
      );
      index++;
    }
    const text = message.content || message.refusal;
    if (text) {
      events.push(
        { type: 'block_start', index, block: { type: 'text' } },
        { type: 'text_delta', index, text },
        { type: 'block_stop', index },
      );
      index++;
    }
    for (const call of message.tool_calls ?? []) {
      if (call.type !== 'function') continue;
      events.push(
        { type: 'block_start', index, block: { type: 'tool_use', id: call.id, name: call.function.name } },
        { type: 'tool_input_delta', index, partialJson: call.function.arguments || '{}' },
        { type: 'block_stop', index },
      );
      index++;
    }
  }
  if (isRecord(completion.usage)) events.push(usageEvent(completion.usage as WireUsage & RawObject));
  const refused = !message?.content && !!message?.refusal;
  const messageExtra = message ? except(message as unknown as RawObject, MAPPED_MESSAGE) : undefined;
  const choiceExtra = choice ? except(choice as unknown as RawObject, MAPPED_CHOICE) : undefined;
  events.push({
    type: 'message_stop',
    stopReason: refused ? 'refusal' : toStopReason(choice?.finish_reason),
    raw: {
      ...(choice?.finish_reason ? { stopReason: choice.finish_reason } : {}),
      ...(messageExtra ? { message: messageExtra } : {}),
      ...(choiceExtra ? { choice: choiceExtra } : {}),
    },
  });
  return events;
}

type OpenBlock = { index: number; kind: 'text' | 'thinking' } | { index: number; kind: 'tool'; toolIndex: number };

/**
 * Incremental mapper for a streamed completion, fed one parsed `data:` chunk
 * at a time and `finish()` at `[DONE]`. Chat chunks interleave nothing, but
 * their pieces (reasoning, text, each tool call) arrive as flat deltas; this
 * turns them into properly opened and closed canonical blocks. The usage
 * chunk follows the finish chunk, so `message_stop` waits for `finish()`.
 * Fields beyond the canonical ones (the first chunk's `system_fingerprint`,
 * a delta's `annotations`, a choice's `logprobs`) are kept for relay.
 */
export class OpenAiStreamMapper {
  private started = false;
  private stopped = false;
  private open: OpenBlock | undefined;
  private nextIndex = 0;
  private readonly seenTools = new Set<number>();
  private stopReason: StopReason | undefined;
  private finishReason: string | undefined;
  private messageId = '';

  /** A choice carried a finish_reason: the answer itself is complete. */
  get sawFinish(): boolean {
    return this.stopReason !== undefined;
  }

  get done(): boolean {
    return this.stopped;
  }

  push(chunk: unknown): CanonicalEvent[] {
    if (!isRecord(chunk)) throw new UpstreamError('protocol', 'upstream sent a malformed chunk');
    // Compatible servers report failures mid-stream as a chunk holding `error`.
    if (isRecord(chunk.error)) throw errorInBody(chunk.error);
    const wire = chunk as unknown as ChatCompletionChunk;
    const events: CanonicalEvent[] = [];
    if (!this.started) {
      this.started = true;
      this.messageId = String(wire.id ?? '');
      events.push(messageStart(chunk));
    }
    const choices = Array.isArray(wire.choices) ? wire.choices : [];
    const choice = choices.find((c) => c.index === 0) ?? choices[0];
    if (choice) this.choice(choice, events);
    if (isRecord(wire.usage)) events.push(usageEvent(wire.usage as WireUsage & RawObject));
    return events;
  }

  /** At `[DONE]` (or a clean end of stream): closes what is open and stops the message. */
  finish(): CanonicalEvent[] {
    if (this.stopped) return [];
    if (!this.started) throw new UpstreamError('protocol', 'upstream stream ended without any chunk');
    const events: CanonicalEvent[] = [];
    this.close(events);
    this.stopped = true;
    events.push({ type: 'message_stop', stopReason: this.stopReason ?? 'end_turn', ...(this.finishReason ? { raw: { stopReason: this.finishReason } } : {}) });
    return events;
  }

  private choice(choice: ChatCompletionChunk.Choice, events: CanonicalEvent[]): void {
    const delta = isRecord(choice.delta) ? choice.delta : undefined;
    if (delta) {
      const reasoning = reasoningOf(delta);
      if (reasoning !== undefined) {
        const index = this.ensure('thinking', events);
        events.push({ type: 'thinking_delta', index, text: reasoning });
      }
      const text = nonEmpty(delta.content) ?? nonEmpty(delta.refusal);
      if (text !== undefined) {
        const index = this.ensure('text', events);
        events.push({ type: 'text_delta', index, text });
      }
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) this.toolCall(call, events);
    }
    const deltaExtra = delta ? except(delta as RawObject, MAPPED_MESSAGE) : undefined;
    const choiceExtra = except(choice as unknown as RawObject, MAPPED_CHOICE);
    // `logprobs: null` says nothing; a real value is relayed.
    if (choiceExtra && Object.values(choiceExtra).every((v) => v === null)) delete choiceExtra.logprobs;
    const relayChoice = choiceExtra && Object.keys(choiceExtra).length > 0 ? choiceExtra : undefined;
    if (deltaExtra || relayChoice) events.push({ type: 'raw_delta', index: -1, delta: deltaExtra ?? {}, ...(relayChoice ? { choice: relayChoice } : {}) });
    if (choice.finish_reason) {
      this.close(events);
      this.stopReason = toStopReason(choice.finish_reason);
      this.finishReason = choice.finish_reason;
    }
  }

  private toolCall(call: ChatCompletionChunk.Choice.Delta.ToolCall, events: CanonicalEvent[]): void {
    const toolIndex = typeof call.index === 'number' ? call.index : 0;
    const open = this.open;
    let index: number;
    if (open?.kind === 'tool' && open.toolIndex === toolIndex) {
      index = open.index;
    } else {
      if (this.seenTools.has(toolIndex)) {
        // A canonical block cannot be reopened once another has started.
        throw new UpstreamError('protocol', 'upstream interleaved the fragments of parallel tool calls');
      }
      this.close(events);
      this.seenTools.add(toolIndex);
      index = this.nextIndex++;
      this.open = { index, kind: 'tool', toolIndex };
      events.push({
        type: 'block_start',
        index,
        block: {
          type: 'tool_use',
          // Some compatible servers omit ids; a stable one lets the caller's
          // tool_result still be matched on the next turn.
          id: call.id || `call_${this.messageId}_${toolIndex}`,
          name: call.function?.name ?? '',
        },
      });
    }
    const fragment = call.function?.arguments;
    if (fragment) events.push({ type: 'tool_input_delta', index, partialJson: fragment });
  }

  private ensure(kind: 'text' | 'thinking', events: CanonicalEvent[]): number {
    if (this.open?.kind === kind) return this.open.index;
    this.close(events);
    const index = this.nextIndex++;
    this.open = { index, kind };
    events.push({ type: 'block_start', index, block: { type: kind } });
    return index;
  }

  private close(events: CanonicalEvent[]): void {
    if (!this.open) return;
    events.push({ type: 'block_stop', index: this.open.index });
    this.open = undefined;
  }
}

function errorInBody(error: Record<string, unknown>): UpstreamError {
  const message = typeof error.message === 'string' ? error.message : 'upstream stream error';
  const type = typeof error.type === 'string' ? error.type : typeof error.code === 'string' ? error.code : undefined;
  return new UpstreamError('protocol', message, undefined, type);
}
