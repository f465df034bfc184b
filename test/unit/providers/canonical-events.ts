// Helpers shared by the provider tests: recorded transcripts, replay through
// the SSE parser, and a checker that folds canonical events into the answer a
// caller would see, failing on any out-of-order event.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type {
  CanonicalContent,
  CanonicalEvent,
  CanonicalResponse,
  StopReason,
  UpstreamUsage,
} from '../../../src/core/canonical';
import { UpstreamError } from '../../../src/providers/provider';
import { SseParser, type SseEvent } from '../../../src/providers/sse-parser';

/**
 * A recorded transcript from /work/shared/fixtures. Two of them end without
 * the blank line that terminates the last event (see their README); a
 * terminated stream is what an upstream sends, so one is appended.
 */
export function fixture(name: string): Uint8Array {
  const bytes = readFileSync(new URL(`../../../../shared/fixtures/${name}`, import.meta.url));
  let text = bytes.toString('utf8');
  if (!text.endsWith('\n\n')) text += text.endsWith('\n') ? '\n' : '\n\n';
  return new TextEncoder().encode(text);
}

export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Parses bytes delivered as the given chunks. */
export function parseChunks(chunks: Uint8Array[]): SseEvent[] {
  const parser = new SseParser();
  const events = chunks.flatMap((chunk) => parser.push(chunk));
  return [...events, ...parser.end()];
}

/** Every way of cutting the bytes into two chunks (cut at 0..length). */
export function* twoWaySplits(bytes: Uint8Array): Generator<[number, Uint8Array[]]> {
  for (let cut = 0; cut <= bytes.length; cut++) yield [cut, [bytes.subarray(0, cut), bytes.subarray(cut)]];
}

export interface Collected extends CanonicalResponse {
  /** Cumulative upstream usage after the last usage event. */
  usage: UpstreamUsage;
  /** Usage events in arrival order, as emitted (partial). */
  usageEvents: Array<Partial<UpstreamUsage>>;
}

/**
 * Folds events into a response, asserting the canonical order: one
 * message_start first, blocks numbered 0,1,2… each started before its deltas
 * and stopped before the next starts, deltas matching the block type, and
 * message_stop last. Usage values overwrite (they are cumulative).
 */
export function collect(events: readonly CanonicalEvent[]): Collected {
  expect(events.length, 'no events').to.be.greaterThan(0);
  const first = events[0];
  if (first?.type !== 'message_start') throw new Error(`first event is ${first?.type}, not message_start`);
  const content: CanonicalContent[] = [];
  const toolJson = new Map<number, string>();
  const usage: UpstreamUsage = { inputCacheHit: 0, inputCacheMiss: 0, output: 0 };
  const usageEvents: Array<Partial<UpstreamUsage>> = [];
  let open: number | undefined;
  let stop: { stopReason: StopReason; stopSequence: string | null } | undefined;
  for (const [position, event] of events.entries()) {
    if (stop) throw new Error(`event ${event.type} after message_stop`);
    if (position > 0 && event.type === 'message_start') throw new Error('second message_start');
    switch (event.type) {
      case 'message_start':
        break;
      case 'block_start': {
        expect(open, `block ${event.index} started while ${open} is open`).to.equal(undefined);
        expect(event.index, 'block indexes are consecutive').to.equal(content.length);
        open = event.index;
        if (event.block.type === 'text') content.push({ type: 'text', text: '' });
        else if (event.block.type === 'thinking') content.push({ type: 'thinking', thinking: '' });
        else if (event.block.type === 'tool_use') {
          content.push({ type: 'tool_use', id: event.block.id, name: event.block.name, input: {} });
          toolJson.set(event.index, '');
        } else content.push({ type: 'other', raw: event.block.raw });
        break;
      }
      case 'text_delta':
      case 'thinking_delta':
      case 'tool_input_delta':
      case 'signature_delta': {
        expect(event.index, `${event.type} outside its open block`).to.equal(open);
        const block = content[event.index];
        if (event.type === 'text_delta' && block?.type === 'text') block.text += event.text;
        else if (event.type === 'thinking_delta' && block?.type === 'thinking') block.thinking += event.text;
        else if (event.type === 'signature_delta' && block?.type === 'thinking') {
          block.signature = (block.signature ?? '') + event.signature;
        } else if (event.type === 'tool_input_delta' && (block?.type === 'tool_use' || block?.type === 'other')) {
          toolJson.set(event.index, (toolJson.get(event.index) ?? '') + event.partialJson);
        } else throw new Error(`${event.type} in a ${block?.type} block`);
        break;
      }
      case 'block_stop':
        expect(event.index, 'block_stop of a block that is not open').to.equal(open);
        open = undefined;
        break;
      case 'usage':
        usageEvents.push(event.usage);
        Object.assign(usage, event.usage);
        break;
      case 'message_stop':
        expect(open, 'message_stop with an open block').to.equal(undefined);
        stop = { stopReason: event.stopReason, stopSequence: event.stopSequence ?? null };
        break;
      case 'raw_delta':
      case 'raw_event':
        // Kept for same-protocol relay; nothing of the canonical answer.
        break;
    }
  }
  if (!stop) throw new Error('no message_stop');
  for (const [index, json] of toolJson) {
    const block = content[index];
    if (block?.type === 'tool_use') block.input = json === '' ? {} : (JSON.parse(json) as unknown);
  }
  return {
    id: first.id,
    model: first.model,
    content,
    stopReason: stop.stopReason,
    stopSequence: stop.stopSequence,
    usage,
    usageEvents,
  };
}

export function textOf(response: CanonicalResponse): string {
  return response.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** Drains an adapter's stream into an array. */
export async function drain(stream: AsyncIterable<CanonicalEvent>): Promise<CanonicalEvent[]> {
  const events: CanonicalEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The UpstreamError a call fails with; fails the test when it succeeds or throws anything else. */
export async function failureOf(run: Promise<unknown>): Promise<UpstreamError> {
  try {
    await run;
  } catch (error) {
    expect(error).to.be.instanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('expected the call to fail');
}
