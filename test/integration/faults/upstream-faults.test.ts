// Upstream faults as a caller notices them: latency shows up in the first
// byte (and the record says so), a 5xx before the first byte falls back to
// the next deployment of the tier, a tier whose every deployment is down,
// overloaded or rate limited answers 502, 529 or 429 in the caller's form, a
// reset mid-stream ends the stream with an `error` event and is billed for
// what was produced, and a client that reads slowly holds the stream back
// instead of growing the gateway's memory.
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '../../support/fake-upstreams';
import { call, requestBody } from '../../support/data-plane';
import { catalogJson, mockProvider } from '../../support/mock-catalog';
import { messagesBody, startCall } from '../../support/sse-client';

interface UsageRow {
  request_id: string;
  status: string;
  error_code: string | null;
  routed_model: string | null;
  provider: string | null;
  tokens_output: number;
  ttft_ms: number | null;
  latency_ms: number;
}

async function recordOf(requestId: string): Promise<UsageRow> {
  const db = await testDatabase();
  const rows = await db.pool.query<UsageRow>(
    'select request_id, status, error_code, routed_model, provider, tokens_output, ttft_ms, latency_ms from usage_records where request_id = $1',
    [requestId],
  );
  expect(rows.rows, `usage records of ${requestId}`).to.have.length(1);
  return rows.rows[0]!;
}

describe('faults: upstream failures as the caller sees them', function () {
  this.timeout(60_000);
  let t: TestApp;
  let key: string;
  let anthropic: FakeUpstream;
  let openai: FakeUpstream;

  before(async () => {
    anthropic = await startFakeAnthropic();
    openai = await startFakeOpenAI();
    const real = (type: 'anthropic' | 'openai', baseUrl: string) => ({ type, base_url: baseUrl, api_key_env: 'FAKE_UPSTREAM_KEY', idle_timeout_ms: 5_000 });
    t = await startTestApp({
      env: { FAKE_UPSTREAM_KEY: 'sk-upstream-test' },
      catalog: catalogJson(
        {
          slow: mockProvider({ latency_ms: 400 }),
          broken: mockProvider({ fail_rate: 1, fail_status: 503 }),
          failing: mockProvider({ fail_rate: 1, fail_status: 500 }),
          healthy: mockProvider(),
          resetting: mockProvider({ reset_after_chunks: 12, chunk_chars: 16 }),
          claude: real('anthropic', anthropic.baseUrl),
          gpt: real('openai', openai.baseUrl),
        },
        {
          slow: [{ provider: 'slow', model: 'slow-model' }],
          fallback: [
            { provider: 'broken', model: 'broken-model' },
            { provider: 'healthy', model: 'healthy-model' },
          ],
          doomed: [
            { provider: 'failing', model: 'failing-model' },
            { provider: 'failing', model: 'failing-model-2' },
          ],
          overloaded: [
            { provider: 'broken', model: 'broken-model' },
            { provider: 'claude', model: 'claude-overloaded' },
          ],
          limited: [
            { provider: 'claude', model: 'claude-limited' },
            { provider: 'gpt', model: 'gpt-limited' },
          ],
          resetting: [{ provider: 'resetting', model: 'resetting-model' }],
          real: [
            { provider: 'claude', model: 'claude-fake' },
            { provider: 'gpt', model: 'gpt-fake' },
          ],
        },
      ),
    });
    const account = await createAccount(t);
    key = (await createKey(t, account.token, { model_scope: ['slow', 'fallback', 'doomed', 'overloaded', 'limited', 'resetting', 'real'] })).api_key;
  });

  after(async () => {
    await t?.close();
    await anthropic?.close();
    await openai?.close();
  });

  it('latency: a slow upstream delays the first byte, and the record carries the time to first token', async () => {
    const started = Date.now();
    const call = startCall(t.baseUrl, key, messagesBody('slow', true));
    await call.firstByte;
    const firstByteMs = Date.now() - started;
    const result = await call.done;
    expect(result.status).to.equal(200);
    expect(result.events.at(-1)?.event).to.equal('message_stop');
    expect(firstByteMs).to.be.at.least(400);
    const row = await recordOf(result.requestId!);
    expect(row.status).to.equal('ok');
    expect(row.ttft_ms).to.be.at.least(400);
  });

  it('a 5xx before the first byte falls back to the next deployment of the tier', async () => {
    for (const stream of [false, true]) {
      const result = await startCall(t.baseUrl, key, messagesBody('fallback', stream)).done;
      expect(result.status, JSON.stringify(result.body)).to.equal(200);
      const row = await recordOf(result.requestId!);
      expect(row).to.include({ status: 'ok', routed_model: 'healthy-model', provider: 'healthy' });
    }

    // The same over the real protocols: Anthropic answers 529 (overloaded), the OpenAI-compatible deployment answers.
    anthropic.script({ status: 529 });
    openai.script({ text: 'Served by the fallback.' });
    const result = await startCall(t.baseUrl, key, messagesBody('real', false)).done;
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    expect(result.body.content[0].text).to.equal('Served by the fallback.');
    expect(await recordOf(result.requestId!)).to.include({ status: 'ok', routed_model: 'gpt-fake', provider: 'gpt' });
  });

  it('when every deployment fails before the first byte the caller gets a 502 in its own form, metered as upstream_error', async () => {
    const messages = await startCall(t.baseUrl, key, messagesBody('doomed', false)).done;
    expect(messages.status).to.equal(502);
    expect(messages.body).to.deep.include({ type: 'error', request_id: messages.requestId });
    expect(messages.body.error.type).to.equal('api_error');
    expect(await recordOf(messages.requestId!)).to.include({ status: 'upstream_error', tokens_output: 0 });

    const chat = await startCall(t.baseUrl, key, { model: 'doomed', messages: [{ role: 'user', content: 'hi' }] }, '/v1/chat/completions').done;
    expect(chat.status).to.equal(502);
    expect(chat.body.error).to.include({ type: 'server_error', code: 'upstream_unavailable', param: null });
    expect(await recordOf(chat.requestId!)).to.include({ status: 'upstream_error' });
  });

  it('when every deployment is overloaded (503, 529) the caller gets 529 overloaded in its own form', async () => {
    anthropic.script({ status: 529 });
    const messages = await startCall(t.baseUrl, key, messagesBody('overloaded', false)).done;
    expect(messages.status).to.equal(529);
    expect(messages.body.error.type).to.equal('overloaded_error');
    expect(await recordOf(messages.requestId!)).to.include({ status: 'upstream_error', error_code: 'http', tokens_output: 0 });

    anthropic.script({ status: 529 });
    const chat = await startCall(t.baseUrl, key, { model: 'overloaded', messages: [{ role: 'user', content: 'hi' }] }, '/v1/chat/completions').done;
    expect(chat.status).to.equal(529);
    expect(chat.body.error).to.include({ type: 'server_error', code: 'upstream_overloaded' });
  });

  it('when every deployment is rate limited the caller gets 429 until the first frees up, and no upstream is called meanwhile', async () => {
    const upstreamCalls = () => [...anthropic.requests, ...openai.requests].filter((r) => /-limited$/.test(String(r.body?.model))).length;
    anthropic.script({ status: 429, headers: { 'retry-after': '30' } });
    openai.script({ status: 429, headers: { 'retry-after-ms': '20000' } });
    const first = await call(t, 'messages', key, requestBody('messages', 'limited', 'Say hello.'));
    expect(first.status, first.raw).to.equal(429);
    expect(first.body.error.type).to.equal('rate_limit_error');
    // The soonest deployment to free up is the second, after the 20 s it asked for.
    expect(first.headers.get('retry-after')).to.equal('20');
    expect(Number(first.headers.get('retry-after-ms'))).to.equal(20_000);
    expect(first.headers.get('x-should-retry')).to.equal('true');
    expect(upstreamCalls()).to.equal(2);
    expect(await recordOf(first.requestId)).to.include({ status: 'upstream_error', error_code: 'rate_limit_exceeded', routed_model: null, tokens_output: 0 });

    // Within the window: refused at once, in each form, plain or streamed, without an upstream call.
    for (const stream of [false, true]) {
      const chat = await call(t, 'chat', key, requestBody('chat', 'limited', 'Say hello.', { stream }));
      expect(chat.status, chat.raw).to.equal(429);
      expect(chat.body.error).to.include({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
      expect(Number(chat.headers.get('retry-after'))).to.be.within(19, 20);
      expect(Number(chat.headers.get('retry-after-ms'))).to.be.within(15_000, 20_000);
      expect(await recordOf(chat.requestId)).to.include({ status: 'upstream_error', error_code: 'rate_limit_exceeded' });
    }
    expect(upstreamCalls()).to.equal(2);
  });

  it('a reset mid-stream ends the stream with an error event, billed as upstream_error for what was produced', async () => {
    // The mock's reply is shorter than the output guardrails' hold-back window, so the
    // client sees no text before the error; what the upstream produced is billed all the same.
    const mock = await startCall(t.baseUrl, key, messagesBody('resetting', true)).done;
    expect(mock.status).to.equal(200);
    const kinds = mock.events.map((e) => e.event);
    expect(kinds[0]).to.equal('message_start');
    expect(kinds.at(-1)).to.equal('error');
    expect(kinds).to.not.include('message_stop');
    expect(mock.events.at(-1)!.data).to.deep.include({ type: 'error', request_id: mock.requestId });
    expect(mock.events.at(-1)!.data.error.type).to.equal('api_error');
    const row = await recordOf(mock.requestId!);
    expect(row).to.include({ status: 'upstream_error', error_code: 'protocol' });
    expect(row.tokens_output).to.be.greaterThan(0);

    // A real protocol stream whose socket is destroyed after some events; no fallback once bytes were sent.
    // (Events trickle in: a reset that arrives together with the first bytes is a failure before the first byte.)
    const words = Array.from({ length: 16 }, (_, i) => `sentence number ${i} of a reply that will not finish. `);
    anthropic.script({ chunks: words, resetAfterEvents: 15, chunkDelayMs: 10 });
    const real = await startCall(t.baseUrl, key, messagesBody('real', true)).done;
    expect(real.events.at(-1)?.event, real.events.map((e) => e.event).join(',')).to.equal('error');
    expect(real.events.filter((e) => e.event === 'content_block_delta').length).to.be.greaterThan(0);
    expect(await recordOf(real.requestId!)).to.include({ status: 'upstream_error', routed_model: 'claude-fake' });

    // The OpenAI form reports the same failure as an error chunk followed by [DONE].
    anthropic.script({ chunks: words, resetAfterEvents: 15, chunkDelayMs: 10 });
    const chat = await startCall(t.baseUrl, key, { model: 'real', stream: true, messages: [{ role: 'user', content: 'hi' }] }, '/v1/chat/completions').done;
    const last = chat.events.at(-2);
    expect(last?.data.error).to.include({ type: 'server_error' });
    expect(chat.events.at(-1)?.data).to.equal('[DONE]');
  });

  it('a slow reader holds the stream back: the gateway buffers a bounded amount and the stream still completes', async () => {
    // ~16 MB of text in 4 KB deltas: far more than socket buffers hold.
    const piece = 'x'.repeat(4_095) + ' ';
    anthropic.script({ chunks: Array.from({ length: 4_000 }, () => piece), usage: { input: 5, output: 4_000_000 } });
    let response: ServerResponse | undefined;
    const capture = (request: { url?: string }, res: ServerResponse) => {
      if (request.url?.startsWith('/v1/messages')) response = res;
    };
    t.app.server.server.on('request', capture);
    const { port } = new URL(t.baseUrl);
    const body = JSON.stringify(messagesBody('real', true));
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = 0;
    let tail = '';
    let complete = (): void => undefined;
    const ended = new Promise<void>((resolve) => {
      complete = resolve;
      socket.once('close', resolve);
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      tail = (tail + chunk.toString('latin1')).slice(-2_000);
      if (tail.includes('event: message_stop')) complete();
    });
    socket.write(
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
        `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    while (received < 64 * 1024) await new Promise((resolve) => setTimeout(resolve, 5));
    socket.pause();

    // While the client reads nothing, the gateway stops writing at its socket's high-water mark.
    let maxBuffered = 0;
    const pausedUntil = Date.now() + 1_500;
    while (Date.now() < pausedUntil) {
      maxBuffered = Math.max(maxBuffered, response?.writableLength ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const receivedWhilePaused = received;
    socket.resume();
    await ended;
    socket.destroy();
    t.app.server.server.off('request', capture);
    process.stdout.write(
      `      slow reader: gateway buffered at most ${(maxBuffered / 1024).toFixed(0)} KiB in user space while paused; ` +
        `${(received / 1048576).toFixed(1)} MiB delivered in the end\n`,
    );
    expect(response, 'the server-side response').to.not.equal(undefined);
    expect(maxBuffered).to.be.lessThan(256 * 1024);
    expect(receivedWhilePaused).to.be.lessThan(received / 2);
    expect(received).to.be.greaterThan(16_000_000);
    expect(tail).to.include('event: message_stop');
  });
});

describe('faults: a client that stops reading a stream', function () {
  this.timeout(30_000);
  let t: TestApp;
  let key: string;
  let anthropic: FakeUpstream;

  before(async () => {
    anthropic = await startFakeAnthropic();
    t = await startTestApp({
      env: { FAKE_UPSTREAM_KEY: 'sk-upstream-test', GATEWAY_STREAM_STALL_MS: '600' },
      catalog: catalogJson(
        { claude: { type: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'FAKE_UPSTREAM_KEY' } },
        { real: [{ provider: 'claude', model: 'claude-fake' }] },
      ),
    });
    const account = await createAccount(t);
    key = (await createKey(t, account.token, { model_scope: ['real'] })).api_key;
  });

  after(async () => {
    await t?.close();
    await anthropic?.close();
  });

  it('is hung up on after GATEWAY_STREAM_STALL_MS, the upstream call ends and what was produced is metered', async () => {
    const piece = 'y'.repeat(4_095) + ' ';
    anthropic.script({ chunks: Array.from({ length: 4_000 }, () => piece), usage: { input: 5, output: 4_000_000 } });
    const { port } = new URL(t.baseUrl);
    const body = JSON.stringify(messagesBody('real', true));
    // The hang-up is seen on the server side: a paused client socket would not notice it.
    let serverClosed: Promise<number> | undefined;
    const capture = (request: { url?: string }, res: ServerResponse) => {
      if (request.url?.startsWith('/v1/messages')) serverClosed = new Promise((resolve) => res.once('close', () => resolve(Date.now())));
    };
    t.app.server.server.on('request', capture);
    const socket = net.connect(Number(port), '127.0.0.1');
    let head = '';
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (head.length < 2_000) head += chunk.toString('latin1');
    });
    socket.write(
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    while (received < 64 * 1024) await new Promise((resolve) => setTimeout(resolve, 5));
    socket.pause();
    const pausedAt = Date.now();
    const hungUpAt = await serverClosed!;
    t.app.server.server.off('request', capture);
    const requestId = /request-id: (req_\w+)/i.exec(head)?.[1];
    expect(requestId, 'request-id header').to.be.a('string');
    expect(hungUpAt - pausedAt, 'hung up after the stall limit, not long after').to.be.within(300, 5_000);

    // The upstream exchange is over (cancelled, or written out into socket buffers) rather than left hanging.
    await anthropic.requests.at(-1)!.ended;
    // The record is written once the call has wound down.
    let record: UsageRow | undefined;
    for (let i = 0; i < 50 && !record; i++) {
      const db = await testDatabase();
      const rows = await db.pool.query<UsageRow>('select * from usage_records where request_id = $1', [requestId]);
      record = rows.rows[0];
      if (!record) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(record, 'usage record').to.not.equal(undefined);
    expect(record!.status).to.equal('client_aborted');
    // Billed for what went through the gateway before it hung up: some, and far from the whole 16 MB reply
    // (loopback socket buffers hold a few MB, so the upstream may have written more than that).
    const whole = 4_000 * 1_025;
    expect(Number(record!.tokens_output), 'what was produced is billed').to.be.within(1, whole / 2);
    socket.destroy();
  });
});
