import { expect } from 'chai';
import { encode } from 'gpt-tokenizer';
import type { CanonicalEvent, CanonicalMessage } from '../../../src/core/canonical';
import { MockProvider } from '../../../src/providers/mock/mock.provider';
import { createProviderRegistry } from '../../../src/providers/registry';
import type { MockBehaviour } from '../../../src/core/catalog.types';
import { canonicalRequest, fakeDeployment } from '../../support/fake-upstreams';
import { collect, drain, failureOf, textOf } from '../../unit/providers/canonical-events';

const user = (text: string): CanonicalMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): CanonicalMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

describe('Mock provider', () => {
  let adapter: MockProvider;

  beforeEach(() => {
    adapter = new MockProvider({ random: () => 0.5 });
  });

  function call(
    overrides: Parameters<typeof canonicalRequest>[0] = {},
    options: { model?: string; thinking?: boolean; mock?: Partial<MockBehaviour> } = {},
    signal: AbortSignal = new AbortController().signal,
  ): AsyncIterable<CanonicalEvent> {
    const deployment = fakeDeployment('mock', { model: options.model ?? 'sim-small', ...options });
    return adapter.stream({ request: canonicalRequest(overrides), deployment, signal, dropped: [] });
  }

  it('answers deterministically from the request, naming the upstream model', async () => {
    const first = collect(await drain(call({ messages: [user('What is the capital of France?')] })));
    const again = collect(await drain(call({ messages: [user('What is the capital of France?')] })));
    expect(textOf(first)).to.match(/^Mock reply from sim-small: What is the capital of France\?/);
    expect(textOf(again)).to.equal(textOf(first));
    expect(first.model).to.equal('sim-small');
    expect(first.stopReason).to.equal('end_turn');
  });

  it('counts input and output tokens with the tokenizer', async () => {
    const response = collect(await drain(call({ system: 'You are terse.', messages: [user('Hello')] })));
    expect(response.usage.inputCacheHit).to.equal(0);
    expect(response.usage.inputCacheMiss).to.equal(encode('system: You are terse.\n\nuser: Hello').length);
    expect(response.usage.output).to.equal(encode(textOf(response)).length);
  });

  it('streams the text in chunks of chunkChars, input usage first', async () => {
    const events = await drain(call({ stream: true }, { mock: { chunkChars: 10 } }));
    const deltas = events.filter((event) => event.type === 'text_delta');
    expect(deltas.length).to.be.greaterThan(5);
    for (const delta of deltas) expect(delta.text.length).to.be.at.most(10);
    expect(events[1]).to.deep.include({ type: 'usage' });
    expect(events[1]).to.not.have.nested.property('usage.output');
    expect(collect(events).usage.output).to.be.greaterThan(0);
  });

  it('waits latencyMs before the first event and chunkDelayMs between chunks', async () => {
    const started = Date.now();
    const stamps: number[] = [];
    for await (const event of call({ stream: true }, { mock: { latencyMs: 120, chunkDelayMs: 30, chunkChars: 40 } })) {
      if (event.type === 'message_start' || event.type === 'text_delta') stamps.push(Date.now() - started);
    }
    expect(stamps[0]).to.be.at.least(110);
    expect((stamps.at(-1) ?? 0) - (stamps[1] ?? 0)).to.be.at.least(30 * (stamps.length - 3));
  });

  describe('prefix cache', () => {
    const system = 'You are a meticulous assistant. '.repeat(20);

    it('reports the repeated system-and-history prefix as cache hits', async () => {
      const history = [user('First question about invoices.'), assistant('An answer about invoices.')];
      const first = collect(await drain(call({ system, messages: [...history, user('Question A')] })));
      const second = collect(await drain(call({ system, messages: [...history, user('Question B, a different one')] })));
      expect(first.usage.inputCacheHit).to.equal(0);
      expect(second.usage.inputCacheHit).to.be.greaterThan(100);
      const total = encode(
        `system: ${system}\n\nuser: First question about invoices.\n\nassistant: An answer about invoices.\n\nuser: Question B, a different one`,
      ).length;
      expect(second.usage.inputCacheHit + second.usage.inputCacheMiss).to.equal(total);
    });

    it('hits on the next turn of a conversation that replays the mock reply', async () => {
      const turn1 = collect(await drain(call({ system, messages: [user('Hi there')] })));
      const turn2 = collect(
        await drain(call({ system, messages: [user('Hi there'), assistant(textOf(turn1)), user('Tell me more')] })),
      );
      expect(turn2.usage.inputCacheHit).to.be.greaterThan(0);
    });

    it('keeps the cache per upstream model', async () => {
      const messages = [user('one'), assistant('two'), user('three')];
      await drain(call({ system, messages }, { model: 'sim-small' }));
      const other = collect(await drain(call({ system, messages }, { model: 'sim-large' })));
      expect(other.usage.inputCacheHit).to.equal(0);
    });

    it('does not share the cache between provider instances', async () => {
      const messages = [user('one'), assistant('two'), user('three')];
      await drain(call({ system, messages }));
      adapter = new MockProvider();
      expect(collect(await drain(call({ system, messages }))).usage.inputCacheHit).to.equal(0);
    });
  });

  it('truncates at max_tokens and says so', async () => {
    const response = collect(await drain(call({ maxTokens: 5 })));
    expect(response.stopReason).to.equal('max_tokens');
    expect(response.usage.output).to.equal(5);
    expect(encode(textOf(response)).length).to.be.at.most(5);
  });

  it('stops at a stop sequence', async () => {
    const response = collect(await drain(call({ stopSequences: ['built-in'] })));
    expect(response.stopReason).to.equal('stop_sequence');
    expect(response.stopSequence).to.equal('built-in');
    expect(textOf(response)).to.not.include('built-in');
  });

  it('thinks first on thinking deployments', async () => {
    const response = collect(await drain(call({ stream: true }, { thinking: true })));
    expect(response.content[0]).to.have.property('type', 'thinking');
    expect(response.content[0]).to.have.property('signature').that.is.a('string');
    expect(response.content[1]).to.have.property('type', 'text');
  });

  it('calls a tool the user names, with input satisfying its required fields', async () => {
    const tools = [
      {
        name: 'get_weather',
        inputSchema: {
          type: 'object',
          properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { enum: ['c', 'f'] } },
          required: ['city', 'days', 'unit'],
        },
      },
    ];
    const response = collect(await drain(call({ stream: true, tools, messages: [user('Use get_weather for Paris')] })));
    expect(response.stopReason).to.equal('tool_use');
    expect(response.content.at(-1)).to.deep.include({ type: 'tool_use', name: 'get_weather', input: { city: 'mock', days: 1, unit: 'c' } });

    const none = collect(await drain(call({ tools, toolChoice: { type: 'none' }, messages: [user('Use get_weather')] })));
    expect(none.stopReason).to.equal('end_turn');
  });

  describe('faults', () => {
    it('fails every call with failStatus when failRate is 1', async () => {
      adapter = new MockProvider();
      const error = await failureOf(drain(call({}, { mock: { failRate: 1, failStatus: 503 } })));
      expect(error).to.include({ failure: 'http', status: 503 });
      expect(error.retryable).to.equal(true);
      const events: CanonicalEvent[] = [];
      await failureOf(
        (async () => {
          for await (const event of call({ stream: true }, { mock: { failRate: 1, failStatus: 400 } })) events.push(event);
        })(),
      );
      expect(events, 'fails before the first event').to.deep.equal([]);
    });

    it('fails the share of calls failRate asks for', async () => {
      adapter = new MockProvider({ random: () => 0.3 });
      await failureOf(drain(call({}, { mock: { failRate: 0.4, failStatus: 429 } })));
      const response = collect(await drain(call({}, { mock: { failRate: 0.2, failStatus: 429 } })));
      expect(response.stopReason).to.equal('end_turn');
    });

    it('resets the stream after resetAfterChunks chunks', async () => {
      const events: CanonicalEvent[] = [];
      const error = await failureOf(
        (async () => {
          for await (const event of call({ stream: true }, { mock: { chunkChars: 5, resetAfterChunks: 3 } })) events.push(event);
        })(),
      );
      expect(error).to.include({ failure: 'protocol', message: 'connection reset' });
      expect(events.filter((event) => event.type === 'text_delta')).to.have.length(3);
    });

    it('stops promptly when aborted during the latency', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 30);
      const started = Date.now();
      const error = await failureOf(drain(call({ stream: true }, { mock: { latencyMs: 5_000 } }, controller.signal)));
      expect(error.failure).to.equal('aborted');
      expect(Date.now() - started).to.be.lessThan(1_000);
    });

    it('stops promptly when aborted mid-stream', async () => {
      const controller = new AbortController();
      let deltas = 0;
      const error = await failureOf(
        (async () => {
          for await (const event of call({ stream: true }, { mock: { chunkDelayMs: 1_000, chunkChars: 4 } }, controller.signal)) {
            if (event.type === 'text_delta') {
              deltas++;
              setTimeout(() => controller.abort(), 20);
            }
          }
        })(),
      );
      expect(error.failure).to.equal('aborted');
      expect(deltas).to.equal(1);
    });
  });

  it('is one shared instance per type in the registry', async () => {
    const registry = createProviderRegistry();
    expect(registry.forType('mock')).to.equal(registry.forType('mock'));
    expect(registry.forType('anthropic')).to.not.equal(registry.forType('openai'));
    const deployment = fakeDeployment('mock');
    const request = canonicalRequest({ system: 'Shared cache. '.repeat(10), messages: [user('a'), assistant('b'), user('c')] });
    const signal = new AbortController().signal;
    await drain(registry.forType('mock').stream({ request, deployment, signal, dropped: [] }));
    const again = collect(await drain(registry.forType('mock').stream({ request, deployment, signal, dropped: [] })));
    expect(again.usage.inputCacheHit).to.be.greaterThan(0);
  });
});
