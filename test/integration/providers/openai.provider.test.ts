import { expect } from 'chai';
import { OpenAiProvider } from '../../../src/providers/openai/openai.provider';
import { freePort } from '../../support/db';
import { canonicalRequest, fakeDeployment, startFakeOpenAI } from '../../support/fake-upstreams';
import { collect, drain, failureOf, textOf } from '../../unit/providers/canonical-events';
import { withFakeUpstream } from './provider-harness';

describe('OpenAI provider (fake upstream over HTTP)', () => {
  const adapter = new OpenAiProvider();
  const { upstream, call } = withFakeUpstream(adapter, 'openai', startFakeOpenAI, 'qwen-large');

  it('answers a plain call with a bearer token of the provider key only', async () => {
    const response = collect(await drain(call({ system: 'Be kind.' }, { apiKey: 'sk-openai-provider' })));
    expect(textOf(response)).to.equal('Hello there!');
    expect(response.usage).to.deep.equal({ inputCacheHit: 0, inputCacheMiss: 11, output: 6 });

    const [sent] = upstream.requests;
    expect(sent?.path).to.equal('/v1/chat/completions');
    expect(sent?.headers.authorization).to.equal('Bearer sk-openai-provider');
    expect(sent?.headers).to.not.have.property('x-api-key');
    expect(sent?.body).to.deep.include({ model: 'qwen-large', max_tokens: 256, stream: false });
    expect(sent?.body.messages[0]).to.deep.equal({ role: 'system', content: 'Be kind.' });
  });

  it('sends no authorization header when the provider has no key (local servers)', async () => {
    const deployment = fakeDeployment('openai', { baseUrl: upstream.baseUrl });
    deployment.provider.apiKey = undefined;
    await drain(adapter.stream({ request: canonicalRequest(), deployment, signal: new AbortController().signal, dropped: [] }));
    expect(upstream.requests[0]?.headers).to.not.have.property('authorization');
  });

  it('streams text and maps the final usage chunk with cached tokens', async () => {
    upstream.script({ chunks: ['Hel', 'lo ', 'world'], usage: { input: 100, cacheRead: 64, output: 3 } });
    const events = await drain(call({ stream: true }));
    const response = collect(events);
    expect(textOf(response)).to.equal('Hello world');
    expect(response.usage).to.deep.equal({ inputCacheHit: 64, inputCacheMiss: 36, output: 3 });
    expect(events.slice(-2).map((event) => event.type)).to.deep.equal(['usage', 'message_stop']);
    expect(upstream.requests[0]?.body).to.deep.include({ stream: true, stream_options: { include_usage: true } });
  });

  it('streams reasoning_content as thinking and a tool call as tool_use', async () => {
    upstream.script({
      thinking: 'Need the weather tool.',
      text: '',
      toolUse: { id: 'call_7', name: 'get_weather', input: { city: 'San Francisco', state: 'CA' } },
    });
    const response = collect(await drain(call({ stream: true }, { thinking: true })));
    expect(response.content).to.deep.equal([
      { type: 'thinking', thinking: 'Need the weather tool.' },
      { type: 'tool_use', id: 'call_7', name: 'get_weather', input: { city: 'San Francisco', state: 'CA' } },
    ]);
    expect(response.stopReason).to.equal('tool_use');
    expect(upstream.requests[0]?.body.reasoning_effort).to.equal('high');
  });

  it('maps a plain JSON reply even when a stream was asked for', async () => {
    upstream.script({ ignoreStream: true, text: 'Plain.' });
    expect(textOf(collect(await drain(call({ stream: true }))))).to.equal('Plain.');
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
    const cases: Array<[number, boolean]> = [
      [500, true],
      [503, true],
      [429, true],
      [400, false],
      [404, false],
    ];
    for (const [status, retryable] of cases) {
      it(`maps HTTP ${status} to an http UpstreamError (${retryable ? 'retryable' : 'not retryable'})`, async () => {
        upstream.script({ status, error: { type: 'some_error', message: `upstream says ${status}` } });
        const error = await failureOf(drain(call({ stream: true })));
        expect(error).to.include({ failure: 'http', status, upstreamType: 'some_error', message: `upstream says ${status}` });
        expect(error.retryable).to.equal(retryable);
      });
    }

    it('reads the error kind from `code` when `type` is absent', async () => {
      upstream.script({ status: 400, errorBody: JSON.stringify({ error: { message: 'bad model', code: 'model_not_found' } }) });
      const error = await failureOf(drain(call()));
      expect(error).to.include({ status: 400, upstreamType: 'model_not_found', message: 'bad model' });
    });

    it('maps a refused connection to a retryable connect failure', async () => {
      const port = await freePort();
      const deployment = fakeDeployment('openai', { baseUrl: `http://127.0.0.1:${port}/v1` });
      const error = await failureOf(
        drain(adapter.stream({ request: canonicalRequest(), deployment, signal: new AbortController().signal, dropped: [] })),
      );
      expect(error.failure).to.equal('connect');
      expect(error.retryable).to.equal(true);
    });

    it('times out when no response headers arrive', async () => {
      upstream.script({ delayMs: 2_000 });
      const error = await failureOf(drain(call({}, { connectTimeoutMs: 100 })));
      expect(error.failure).to.equal('timeout');
      expect(error.retryable).to.equal(true);
    });

    it('times out when the stream goes silent mid-way', async () => {
      upstream.script({ hangAfterEvents: 2 });
      const error = await failureOf(drain(call({ stream: true }, { idleTimeoutMs: 150 })));
      expect(error.failure).to.equal('timeout');
      await upstream.requests[0]?.ended;
      expect(upstream.requests[0]?.closedEarly).to.equal(true);
    });

    it('reports a connection reset mid-stream as a protocol failure', async () => {
      upstream.script({ resetAfterEvents: 2 });
      const error = await failureOf(drain(call({ stream: true })));
      expect(error.failure).to.equal('protocol');
    });

    it('maps an error chunk mid-stream', async () => {
      upstream.script({ streamError: { afterEvents: 2, type: 'server_error', message: 'The server had an error' } });
      const error = await failureOf(drain(call({ stream: true })));
      expect(error).to.include({ failure: 'protocol', upstreamType: 'server_error', message: 'The server had an error' });
    });
  });

  describe('cancellation', () => {
    it('stops and cancels the upstream request when the caller aborts mid-stream', async () => {
      upstream.script({ chunks: ['a', 'b', 'c', 'd', 'e'], chunkDelayMs: 100 });
      const controller = new AbortController();
      let deltas = 0;
      const error = await failureOf(
        (async () => {
          for await (const event of call({ stream: true }, {}, controller.signal)) {
            if (event.type === 'text_delta') {
              deltas++;
              controller.abort();
            }
          }
        })(),
      );
      expect(error.failure).to.equal('aborted');
      expect(deltas).to.equal(1);
      await upstream.requests[0]?.ended;
      expect(upstream.requests[0]?.closedEarly).to.equal(true);
    });
  });
});
