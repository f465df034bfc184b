import { expect } from 'chai';
import type { CanonicalEvent } from '../../../src/core/canonical';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider';
import { freePort } from '../../support/db';
import { canonicalRequest, fakeDeployment, startFakeAnthropic } from '../../support/fake-upstreams';
import { collect, drain, failureOf, textOf } from '../../unit/providers/canonical-events';
import { withFakeUpstream } from './provider-harness';

describe('Anthropic provider (fake upstream over HTTP)', () => {
  const adapter = new AnthropicProvider();
  const { upstream, call } = withFakeUpstream(adapter, 'anthropic', startFakeAnthropic, 'claude-x');

  it('answers a plain call and sends only the provider key', async () => {
    const response = collect(await drain(call({ system: 'Be kind.' }, { apiKey: 'sk-ant-provider' })));
    expect(textOf(response)).to.equal('Hello there!');
    expect(response.model).to.equal('claude-x');
    expect(response.usage).to.deep.equal({ inputCacheHit: 0, inputCacheMiss: 11, output: 6 });

    const [sent] = upstream.requests;
    expect(sent?.method).to.equal('POST');
    expect(sent?.path).to.equal('/v1/messages');
    expect(sent?.headers['x-api-key']).to.equal('sk-ant-provider');
    expect(sent?.headers['anthropic-version']).to.equal('2023-06-01');
    expect(sent?.headers['content-type']).to.equal('application/json');
    expect(sent?.headers).to.not.have.property('authorization');
    expect(sent?.body).to.deep.include({ model: 'claude-x', system: 'Be kind.', max_tokens: 256, stream: false });
  });

  it('streams text, thinking and cumulative usage', async () => {
    upstream.script({
      thinking: 'Short plan.',
      chunks: ['Hel', 'lo ', 'world'],
      usage: { input: 40, cacheRead: 7, cacheCreation: 12, output: 8 },
      cumulativeDeltaUsage: true,
    });
    const events = await drain(call({ stream: true }, { thinking: true, model: 'claude-think' }));
    const response = collect(events);
    expect(response.content).to.deep.equal([
      { type: 'thinking', thinking: 'Short plan.', signature: 'sig_fake_1' },
      { type: 'text', text: 'Hello world' },
    ]);
    expect(events.filter((event) => event.type === 'text_delta')).to.have.length(3);
    // The 12 cache-creation tokens are also reported as writes (5-minute: the upstream sent no TTL split).
    expect(response.usage).to.deep.equal({ inputCacheHit: 7, inputCacheMiss: 52, output: 8, cacheWrite5m: 12, cacheWrite1h: 0 });
    expect(upstream.requests[0]?.body).to.deep.include({ stream: true, thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(upstream.requests[0]?.headers.accept).to.equal('text/event-stream');
  });

  it('streams a tool call whose input is reassembled', async () => {
    upstream.script({ text: 'Checking.', toolUse: { id: 'toolu_9', name: 'get_weather', input: { location: 'Paris' } } });
    const response = collect(await drain(call({ stream: true })));
    expect(response.content.at(-1)).to.deep.equal({
      type: 'tool_use',
      id: 'toolu_9',
      name: 'get_weather',
      input: { location: 'Paris' },
    });
    expect(response.stopReason).to.equal('tool_use');
  });

  it('maps a plain JSON reply even when a stream was asked for', async () => {
    // Some compatible servers ignore `stream: true`; the reply is still good.
    upstream.script({ ignoreStream: true });
    const response = collect(await drain(call({ stream: true })));
    expect(textOf(response)).to.equal('Hello there!');
    expect(upstream.requests[0]?.body.stream).to.equal(true);
  });

  it('reuses the connection for the next call once a stream has ended', async () => {
    // undici returns a socket to its pool a moment after the body ends.
    const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));
    await drain(call({ stream: true }));
    await settle();
    await drain(call({ stream: true }));
    await settle();
    await drain(call());
    expect(upstream.requests.map((request) => request.connection)).to.deep.equal([1, 1, 1]);
  });

  describe('errors', () => {
    const cases: Array<[number, string | undefined, boolean]> = [
      [500, 'api_error', true],
      [529, 'overloaded_error', true],
      [429, 'rate_limit_error', true],
      [400, 'invalid_request_error', false],
      [401, 'authentication_error', false],
    ];
    for (const [status, type, retryable] of cases) {
      it(`maps HTTP ${status} to an http UpstreamError (${retryable ? 'retryable' : 'not retryable'})`, async () => {
        upstream.script({ status, error: { message: `upstream says ${status}` } });
        const error = await failureOf(drain(call()));
        expect(error).to.include({ failure: 'http', status, upstreamType: type, message: `upstream says ${status}` });
        expect(error.retryable).to.equal(retryable);
      });
    }

    it("keeps the upstream's retry-after on a 429 (the longer of retry-after and retry-after-ms)", async () => {
      upstream.script({ status: 429, headers: { 'retry-after': '7' } }, { status: 429, headers: { 'retry-after': '1', 'retry-after-ms': '2500' } }, { status: 429 });
      expect(await failureOf(drain(call()))).to.include({ status: 429, retryAfterMs: 7_000 });
      expect(await failureOf(drain(call()))).to.include({ status: 429, retryAfterMs: 2_500 });
      expect((await failureOf(drain(call()))).retryAfterMs).to.equal(undefined);
    });

    it('keeps the text of an error body that is not JSON', async () => {
      upstream.script({ status: 502, errorBody: 'Bad Gateway from the proxy' });
      const error = await failureOf(drain(call()));
      expect(error).to.include({ failure: 'http', status: 502, message: 'Bad Gateway from the proxy' });
      expect(error.retryable).to.equal(true);
    });

    it('does not follow a redirect, which would carry the provider key elsewhere', async () => {
      const elsewhere = await startFakeAnthropic();
      try {
        upstream.script({ status: 307, headers: { location: `${elsewhere.origin}/v1/messages` } });
        const error = await failureOf(drain(call()));
        expect(error).to.include({ failure: 'http', status: 307 });
        expect(error.retryable).to.equal(false);
        expect(elsewhere.requests).to.have.length(0);
      } finally {
        await elsewhere.close();
      }
    });

    it('maps a refused connection to a retryable connect failure', async () => {
      const port = await freePort();
      const deployment = fakeDeployment('anthropic', { baseUrl: `http://127.0.0.1:${port}` });
      const error = await failureOf(
        drain(adapter.stream({ request: canonicalRequest(), deployment, signal: new AbortController().signal, dropped: [] })),
      );
      expect(error.failure).to.equal('connect');
      expect(error.message).to.match(/ECONNREFUSED/);
      expect(error.retryable).to.equal(true);
    });

    it('times out when no response headers arrive, and cancels the request', async () => {
      upstream.script({ hang: true });
      const started = Date.now();
      const error = await failureOf(drain(call({ stream: true }, { connectTimeoutMs: 150 })));
      expect(error.failure).to.equal('timeout');
      expect(error.retryable).to.equal(true);
      expect(Date.now() - started).to.be.lessThan(2_000);
      await upstream.requests[0]?.ended;
      expect(upstream.requests[0]?.closedEarly).to.equal(true);
    });

    it('times out when the stream goes silent mid-way, after the events already sent', async () => {
      upstream.script({ hangAfterEvents: 4 });
      const events: CanonicalEvent[] = [];
      const error = await failureOf(
        (async () => {
          for await (const event of call({ stream: true }, { idleTimeoutMs: 150 })) events.push(event);
        })(),
      );
      expect(error.failure).to.equal('timeout');
      expect(events.map((event) => event.type)).to.include('text_delta');
      await upstream.requests[0]?.ended;
      expect(upstream.requests[0]?.closedEarly).to.equal(true);
    });

    it('reports a connection reset mid-stream as a protocol failure', async () => {
      upstream.script({ resetAfterEvents: 3 });
      const error = await failureOf(drain(call({ stream: true })));
      expect(error.failure).to.equal('protocol');
    });

    it('maps an error event mid-stream with its upstream type', async () => {
      upstream.script({ streamError: { afterEvents: 3, type: 'overloaded_error', message: 'Overloaded' } });
      const error = await failureOf(drain(call({ stream: true })));
      expect(error).to.include({ failure: 'protocol', upstreamType: 'overloaded_error', message: 'Overloaded' });
    });
  });

  describe('cancellation', () => {
    it('stops and cancels the upstream request when the caller aborts mid-stream', async () => {
      upstream.script({ chunks: ['a', 'b', 'c', 'd', 'e', 'f'], chunkDelayMs: 100 });
      const controller = new AbortController();
      const seen: CanonicalEvent[] = [];
      const error = await failureOf(
        (async () => {
          for await (const event of call({ stream: true }, {}, controller.signal)) {
            seen.push(event);
            if (event.type === 'text_delta') controller.abort();
          }
        })(),
      );
      expect(error.failure).to.equal('aborted');
      expect(error.retryable).to.equal(false);
      expect(seen.filter((event) => event.type === 'text_delta')).to.have.length(1);
      await upstream.requests[0]?.ended;
      expect(upstream.requests[0]?.closedEarly).to.equal(true);
    });

    it('aborts while waiting for the response headers', async () => {
      upstream.script({ hang: true });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const error = await failureOf(drain(call({}, { connectTimeoutMs: 10_000 }, controller.signal)));
      expect(error.failure).to.equal('aborted');
      await upstream.requests[0]?.ended;
      expect(upstream.requests[0]?.closedEarly).to.equal(true);
    });

    it('refuses at once when the signal is already aborted', async () => {
      const error = await failureOf(drain(call({}, {}, AbortSignal.abort())));
      expect(error.failure).to.equal('aborted');
      expect(upstream.requests).to.have.length(0);
    });

    it('cancels the upstream request when the consumer stops reading', async () => {
      upstream.script({ chunks: ['a', 'b', 'c', 'd'], chunkDelayMs: 100 });
      for await (const event of call({ stream: true })) if (event.type === 'text_delta') break;
      await upstream.requests[0]?.ended;
      expect(upstream.requests[0]?.closedEarly).to.equal(true);
    });
  });
});
