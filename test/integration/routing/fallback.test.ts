// Fallback before the first byte and the circuit breaker (docs/architecture.md §5), through
// the real app: the standard tier lists a failing Anthropic deployment first
// and a working OpenAI one second. Each scenario has its own upstream model
// names, so each has its own circuits.
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { freePort } from '../../support/db';
import { answerText, call, catalogFile, requestBody, stopReason, usageRecord, type Form } from '../../support/data-plane';
import { startFakeAnthropic, startFakeOpenAI, type FakeReply, type FakeUpstream } from '../../support/fake-upstreams';

const ENV = { FB_ANTHROPIC_KEY: 'sk-ant-fallback', FB_OPENAI_KEY: 'sk-openai-fallback' };
const BREAKER_COOLDOWN_MS = 400;
/** Scenarios: model `m-<name>` routes standard → [<provider>/claude-<name>, fake-gpt/gpt-<name>]. */
const SCENARIOS = {
  '503': 'fake-claude',
  '429': 'fake-claude',
  window: 'fake-claude',
  refused: 'dead-claude',
  timeout: 'slow-claude',
  '400': 'fake-claude',
  reset: 'fake-claude',
  breaker: 'flaky-claude',
} as const;
type Scenario = keyof typeof SCENARIOS;

function catalog(anthropic: FakeUpstream, openai: FakeUpstream, closedPort: number): unknown {
  const claude = (extra: Record<string, unknown> = {}) => ({
    type: 'anthropic',
    base_url: anthropic.baseUrl,
    api_key_env: 'FB_ANTHROPIC_KEY',
    idle_timeout_ms: 5_000,
    ...extra,
  });
  return catalogFile({
    // High enough that the fallback scenarios (4 failures each) keep their circuits closed; flaky-claude sets its own.
    breaker: { threshold: 10, cooldown_ms: 60_000 },
    providers: {
      'fake-claude': claude(),
      'dead-claude': claude({ base_url: `http://127.0.0.1:${closedPort}` }),
      'slow-claude': claude({ timeout_ms: 300 }),
      'flaky-claude': claude({ breaker: { threshold: 3, cooldown_ms: BREAKER_COOLDOWN_MS } }),
      'fake-gpt': { type: 'openai', base_url: openai.baseUrl, api_key_env: 'FB_OPENAI_KEY', idle_timeout_ms: 5_000 },
    },
    models: Object.entries(SCENARIOS).map(([name, provider]) => ({
      name: `m-${name}`,
      routes: {
        standard: [
          { provider, model: `claude-${name}` },
          { provider: 'fake-gpt', model: `gpt-${name}` },
        ],
      },
    })),
  });
}

describe('routing: fallback before the first byte, circuit breaker', function () {
  this.timeout(30_000);
  let t: TestApp;
  let anthropic: FakeUpstream;
  let openai: FakeUpstream;
  let apiKey: string;

  before(async () => {
    [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
    t = await startTestApp({ catalog: catalog(anthropic, openai, await freePort()), env: ENV });
    const owner = await createAccount(t);
    apiKey = (await createKey(t, owner.token, { model_scope: Object.keys(SCENARIOS).map((name) => `m-${name}`) })).api_key;
  });

  after(async () => {
    await t?.close();
    await anthropic?.close();
    await openai?.close();
  });

  const calls = (upstream: FakeUpstream, model: string) => upstream.requests.filter((request) => request.body?.model === model).length;

  /** One call per form and mode; every one must be answered by the second deployment. */
  async function expectFallback(scenario: Scenario, failure: FakeReply | null): Promise<void> {
    for (const form of ['messages', 'chat'] as const satisfies readonly Form[]) {
      for (const stream of [false, true]) {
        if (failure) anthropic.script(failure);
        const gptCalls = calls(openai, `gpt-${scenario}`);
        const response = await call(t, form, apiKey, requestBody(form, `m-${scenario}`, 'Say hello.', { stream }));

        const where = `${form}, stream ${stream}`;
        expect(response.status, `${where}: ${response.raw}`).to.equal(200);
        // The client never sees the first deployment's failure.
        expect(answerText(form, response), where).to.equal('Hello there!');
        expect(response.raw, where).not.to.match(/fake upstream error|overloaded|rate_limit|"error"/);
        expect(response.events.filter((event) => event.event === 'error'), where).to.deep.equal([]);
        expect(calls(openai, `gpt-${scenario}`), where).to.equal(gptCalls + 1);
        expect(response.headers.get('x-route'), where).to.contain(`model=gpt-${scenario}`);
        const record = await usageRecord(response.requestId);
        expect(record, where).to.include({ status: 'ok', routed_model: `gpt-${scenario}`, provider: 'fake-gpt', stream });
      }
    }
  }

  it('falls back on a 503 from the first deployment', async () => {
    await expectFallback('503', { status: 503 });
    expect(calls(anthropic, 'claude-503')).to.equal(4);
  });

  it('falls back on a 429 from the first deployment, and skips it for the retry-after it asked', async () => {
    anthropic.script({ status: 429, error: { type: 'rate_limit_error', message: 'slow down' }, headers: { 'retry-after': '30' } });
    await expectFallback('429', null);
    // One call found the limit; the other three went straight to the second deployment.
    expect(calls(anthropic, 'claude-429')).to.equal(1);
  });

  it('calls a rate-limited deployment again once its retry-after has passed', async () => {
    const ask = async () => {
      const response = await call(t, 'messages', apiKey, requestBody('messages', 'm-window', 'Say hello.'));
      expect(response.status, response.raw).to.equal(200);
      return (await usageRecord(response.requestId)).routed_model;
    };
    anthropic.script({ status: 429, error: { type: 'rate_limit_error', message: 'slow down' }, headers: { 'retry-after': '1' } });
    expect(await ask()).to.equal('gpt-window');
    // The 429 arrived before that reply, so the window ends within a second of now.
    const windowEndsBy = Date.now() + 1_000;
    expect(await ask()).to.equal('gpt-window');
    expect(calls(anthropic, 'claude-window'), 'not called within its window').to.equal(1);

    await delay(Math.max(0, windowEndsBy + 50 - Date.now()));
    expect(await ask()).to.equal('claude-window');
    expect(calls(anthropic, 'claude-window')).to.equal(2);
  });

  it('falls back when the first deployment refuses the connection', async () => {
    await expectFallback('refused', null);
  });

  it('falls back when the first deployment does not answer within its timeout', async () => {
    const started = Date.now();
    // hang: the fake never sends response headers; the provider's timeout_ms is 300.
    await expectFallback('timeout', { hang: true });
    expect(calls(anthropic, 'claude-timeout')).to.equal(4);
    expect(Date.now() - started).to.be.below(10_000);
  });

  it('does not retry a 400: the upstream rejected the request itself', async () => {
    for (const stream of [false, true]) {
      anthropic.script({ status: 400, error: { type: 'invalid_request_error', message: 'messages: bad shape' } });
      const response = await call(t, 'messages', apiKey, requestBody('messages', 'm-400', 'Say hello.', { stream }));
      expect(response.status).to.equal(400);
      expect(response.body.error.type).to.equal('invalid_request_error');
      const record = await usageRecord(response.requestId);
      expect(record).to.include({ status: 'upstream_error', routed_model: null });
    }
    expect(calls(anthropic, 'claude-400')).to.equal(2);
    expect(calls(openai, 'gpt-400')).to.equal(0);
  });

  it('after the first byte, a reset ends the stream with an error event and is metered as upstream_error', async () => {
    // Events trickle in, so the first ones reach the client before the connection drops.
    anthropic.script({ text: 'One two three four five six seven eight nine ten.', chunkDelayMs: 20, resetAfterEvents: 6 });
    const response = await call(t, 'messages', apiKey, requestBody('messages', 'm-reset', 'Count to ten.', { stream: true }));

    expect(response.status).to.equal(200);
    expect(response.events[0]?.event).to.equal('message_start');
    expect(response.events.at(-1)?.event).to.equal('error');
    expect(response.events.at(-1)?.data.error.type).to.equal('api_error');
    expect(response.events.some((event) => event.event === 'message_stop')).to.equal(false);
    // No fallback once the stream has begun.
    expect(calls(openai, 'gpt-reset')).to.equal(0);
    const record = await usageRecord(response.requestId);
    expect(record).to.include({ status: 'upstream_error', routed_model: 'claude-reset', provider: 'fake-claude' });
  });

  it('opens the circuit after 3 failures, then lets one probe through after the cooldown; success closes it', async () => {
    const ask = async () => {
      const response = await call(t, 'messages', apiKey, requestBody('messages', 'm-breaker', 'Say hello.'));
      expect(response.status, response.raw).to.equal(200);
      return (await usageRecord(response.requestId)).routed_model;
    };

    anthropic.script({ status: 503 }, { status: 503 }, { status: 503 });
    for (let i = 0; i < 3; i++) expect(await ask()).to.equal('gpt-breaker');
    expect(calls(anthropic, 'claude-breaker')).to.equal(3);

    // Open: the failing deployment is no longer called.
    for (let i = 0; i < 3; i++) expect(await ask()).to.equal('gpt-breaker');
    expect(calls(anthropic, 'claude-breaker')).to.equal(3);

    // Half-open after the cooldown: exactly one probe goes through, and it succeeds.
    await delay(BREAKER_COOLDOWN_MS + 50);
    anthropic.script({ text: 'Back again.' });
    expect(await ask()).to.equal('claude-breaker');
    expect(calls(anthropic, 'claude-breaker')).to.equal(4);

    // Closed again: the first deployment serves every call.
    for (let i = 0; i < 2; i++) expect(await ask()).to.equal('claude-breaker');
    expect(calls(anthropic, 'claude-breaker')).to.equal(6);
  });

  it('reopens the circuit when the half-open probe fails', async () => {
    // The circuit of claude-breaker is closed (previous test); open it again.
    anthropic.script({ status: 503 }, { status: 503 }, { status: 503 });
    for (let i = 0; i < 3; i++) await call(t, 'messages', apiKey, requestBody('messages', 'm-breaker', 'Say hello.'));
    const opened = calls(anthropic, 'claude-breaker');
    await delay(BREAKER_COOLDOWN_MS + 50);
    anthropic.script({ status: 503 });
    const probe = await call(t, 'chat', apiKey, requestBody('chat', 'm-breaker', 'Say hello.'));
    expect(probe.status).to.equal(200);
    expect(stopReason('chat', probe)).to.equal('stop');
    expect(calls(anthropic, 'claude-breaker')).to.equal(opened + 1);
    // The failed probe reopened it for a full cooldown.
    await call(t, 'chat', apiKey, requestBody('chat', 'm-breaker', 'Say hello.'));
    expect(calls(anthropic, 'claude-breaker')).to.equal(opened + 1);
  });
});
