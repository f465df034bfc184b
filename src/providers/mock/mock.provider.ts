// The built-in mock upstream: a real server-side component that lets
// `npm start` answer with no network. It streams with the latency the catalog
// asks for, reports prefix-cache hits like a real upstream, and fails on
// purpose (failRate, resetAfterChunks) so fallback can be exercised.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { CanonicalEvent, CanonicalMessage, UpstreamUsage } from '../../core/canonical';
import type { MockBehaviour } from '../../core/catalog.types';
import { abortedError, UpstreamError, type ProviderAdapter, type ProviderCall } from '../provider';
import { countTokens, countTokensYielding } from '../../tokenizer';
import { flattenPrompt, hashText, planReply, splitChunks, type MockReply } from './mock.mapper';

export interface MockProviderOptions {
  /** Source of randomness for `failRate`; injectable so tests are deterministic. */
  random?: () => number;
  /** Prompt prefixes remembered across all mock models. */
  cacheEntries?: number;
}

/**
 * Remembers hashes of prompt prefixes, least recently used evicted first,
 * so memory stays bounded however many distinct prompts pass through.
 */
export class PrefixCache {
  private readonly entries = new Map<string, true>();

  constructor(private readonly capacity: number) {}

  /** Whether the key was present; either way it becomes the most recent. */
  touch(key: string): boolean {
    const present = this.entries.delete(key);
    this.entries.set(key, true);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    return present;
  }

  get size(): number {
    return this.entries.size;
  }
}

export class MockProvider implements ProviderAdapter {
  private readonly random: () => number;
  private readonly cache: PrefixCache;

  constructor(options: MockProviderOptions = {}) {
    this.random = options.random ?? Math.random;
    this.cache = new PrefixCache(options.cacheEntries ?? 10_000);
  }

  async *stream(call: ProviderCall): AsyncGenerator<CanonicalEvent> {
    const { request, deployment, signal } = call;
    const behaviour = deployment.provider.mock;
    // Like a real upstream, the mock has the prompt as soon as it is called: a
    // call cut during its latency is billed the input it would have reported.
    call.sent?.built(() => countTokensYielding(flattenPrompt(request.system, request.messages)));
    call.sent?.markSent();
    await pause(behaviour.latencyMs, signal);
    if (behaviour.failRate > 0 && this.random() < behaviour.failRate) throw failure(behaviour);

    const reply = planReply(request, deployment);
    const usage = this.inputUsage(call);
    const streaming = request.stream;
    const emit = new ChunkClock(behaviour, streaming, signal);

    yield { type: 'message_start', id: `msg_mock_${randomUUID().replaceAll('-', '').slice(0, 24)}`, model: deployment.model };
    // Like Anthropic's message_start, the input side is known before any output.
    yield { type: 'usage', usage: { inputCacheHit: usage.inputCacheHit, inputCacheMiss: usage.inputCacheMiss } };

    let index = 0;
    if (reply.thinking) {
      yield { type: 'block_start', index, block: { type: 'thinking' } };
      for (const piece of emit.pieces(reply.thinking.text)) {
        await emit.beforeChunk();
        yield { type: 'thinking_delta', index, text: piece };
      }
      yield { type: 'signature_delta', index, signature: reply.thinking.signature };
      yield { type: 'block_stop', index };
      index++;
    }
    if (reply.text !== '') {
      yield { type: 'block_start', index, block: { type: 'text' } };
      for (const piece of emit.pieces(reply.text)) {
        await emit.beforeChunk();
        yield { type: 'text_delta', index, text: piece };
      }
      yield { type: 'block_stop', index };
      index++;
    }
    if (reply.toolUse) {
      const { id, name, input } = reply.toolUse;
      yield { type: 'block_start', index, block: { type: 'tool_use', id, name } };
      for (const piece of emit.pieces(JSON.stringify(input))) {
        await emit.beforeChunk();
        yield { type: 'tool_input_delta', index, partialJson: piece };
      }
      yield { type: 'block_stop', index };
    }
    await emit.beforeChunk(false);
    this.rememberReply(call, reply);
    yield { type: 'usage', usage: { ...usage, output: reply.outputTokens } };
    yield { type: 'message_stop', stopReason: reply.stopReason, stopSequence: reply.stopSequence };
  }

  /**
   * Input tokens, split into the part a real prefix cache would have served
   * (system plus every message but the last, seen before for this model) and
   * the rest.
   */
  private inputUsage(call: ProviderCall): UpstreamUsage {
    const { request } = call;
    const total = countTokens(flattenPrompt(request.system, request.messages));
    const prefix = flattenPrompt(request.system, request.messages.slice(0, -1));
    let hit = 0;
    if (prefix !== '' && this.cache.touch(this.key(call, prefix))) hit = Math.min(countTokens(prefix), total);
    return { inputCacheHit: hit, inputCacheMiss: total - hit, output: 0 };
  }

  /** The next turn's prefix is this conversation plus this reply; remember it so that turn hits. */
  private rememberReply(call: ProviderCall, reply: MockReply): void {
    const { request } = call;
    const content: CanonicalMessage['content'] = [];
    if (reply.text !== '') content.push({ type: 'text', text: reply.text });
    if (reply.toolUse) content.push({ type: 'tool_use', ...reply.toolUse });
    if (content.length === 0) return;
    const next = flattenPrompt(request.system, [...request.messages, { role: 'assistant', content }]);
    this.cache.touch(this.key(call, next));
  }

  private key(call: ProviderCall, prompt: string): string {
    const { deployment } = call;
    return hashText(`${deployment.provider.name}\u0000${deployment.model}\u0000${prompt}`);
  }
}

/** Paces streamed chunks and drops the "connection" after `resetAfterChunks`. */
class ChunkClock {
  private sent = 0;

  constructor(
    private readonly behaviour: MockBehaviour,
    private readonly streaming: boolean,
    private readonly signal: AbortSignal,
  ) {}

  pieces(text: string): string[] {
    return this.streaming ? splitChunks(text, this.behaviour.chunkChars) : text === '' ? [] : [text];
  }

  /** Waits before a chunk (none before the first); `countsAsChunk` false for the closing wait. */
  async beforeChunk(countsAsChunk = true): Promise<void> {
    if (this.signal.aborted) throw abortedError();
    if (!this.streaming) return;
    const reset = this.behaviour.resetAfterChunks;
    if (countsAsChunk && reset !== null && this.sent >= reset) {
      throw new UpstreamError('protocol', 'connection reset');
    }
    if (this.sent > 0) await pause(this.behaviour.chunkDelayMs, this.signal);
    if (countsAsChunk) this.sent++;
  }
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw abortedError();
  if (ms <= 0) return;
  try {
    await delay(ms, undefined, { signal });
  } catch {
    throw abortedError();
  }
}

/** The error a real upstream would answer with that status, so fault tests see familiar types. */
function failure(behaviour: MockBehaviour): UpstreamError {
  const status = behaviour.failStatus;
  const type =
    status === 429
      ? 'rate_limit_error'
      : status === 529
        ? 'overloaded_error'
        : status >= 500
          ? 'api_error'
          : status === 401
            ? 'authentication_error'
            : 'invalid_request_error';
  return new UpstreamError('http', `mock upstream failure (HTTP ${status})`, status, type);
}
