// GET /metrics: the counters an operator alerts on move with real calls, and
// the output never carries a key id, a secret, a session token or prompt text.
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogFile } from '../../support/data-plane';
import { startFakeAnthropic, type FakeUpstream } from '../../support/fake-upstreams';

/** The value of one sample line, e.g. `gateway_requests_total{form="messages",…}`; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(' ')[0]!;
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) return Number(line.split(' ').at(-1));
  }
  return 0;
}

describe('metrics: GET /metrics', function () {
  this.timeout(60_000);
  let t: TestApp;
  let failing: FakeUpstream;
  let healthy: FakeUpstream;

  before(async () => {
    failing = await startFakeAnthropic();
    healthy = await startFakeAnthropic();
    t = await startTestApp({
      env: { METRICS_UPSTREAM_KEY: 'sk-metrics-upstream' },
      catalog: catalogFile({
        providers: {
          flaky: { type: 'anthropic', base_url: failing.baseUrl, api_key_env: 'METRICS_UPSTREAM_KEY' },
          steady: { type: 'anthropic', base_url: healthy.baseUrl, api_key_env: 'METRICS_UPSTREAM_KEY' },
        },
        models: [
          {
            name: 'metrics-model',
            display_name: 'Metrics model',
            routes: { light: [{ provider: 'flaky', model: 'flaky-x' }, { provider: 'steady', model: 'steady-x' }] },
          },
        ],
      }),
    });
  });
  after(async () => {
    await t?.close();
    await failing?.close();
    await healthy?.close();
  });

  async function metrics(): Promise<string> {
    const response = await fetch(`${t.baseUrl}/metrics`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/plain/);
    return response.text();
  }

  async function message(apiKey: string, content: string, stream = false): Promise<Response> {
    const response = await fetch(`${t.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'metrics-model', max_tokens: 64, stream, messages: [{ role: 'user', content }] }),
    });
    await response.text();
    return response;
  }

  it('counts requests, fallbacks, guardrail hits and credit refusals without secrets in labels', async () => {
    const owner = await createAccount(t);
    const key = await createKey(t, owner.token, { model_scope: ['metrics-model'] });
    const broke = await createAccount(t, { creditLimitMicros: 0 });
    const brokeKey = await createKey(t, broke.token, { model_scope: ['metrics-model'] });
    const before = await metrics();
    const prompt = 'Please write back to ops-metrics@example.com about the quarterly zebra numbers';

    failing.script({ status: 500 });
    expect((await message(key.api_key, 'hello')).status).to.equal(200); // flaky 500 → steady answers
    expect((await message(key.api_key, 'hello again', true)).status).to.equal(200);
    expect((await message(key.api_key, prompt)).status).to.equal(200);
    expect((await message(brokeKey.api_key, 'hello')).status).to.equal(429);
    const unknown = await fetch(`${t.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key.api_key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model-typed-by-a-caller', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(unknown.status).to.equal(404);

    // onResponse runs just after the client has its answer.
    let after = await metrics();
    for (let i = 0; i < 20 && sample(after, 'gateway_requests_total', { status: '404' }) === sample(before, 'gateway_requests_total', { status: '404' }); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await metrics();
    }
    const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);

    expect(moved('gateway_requests_total', { form: 'messages', model: 'metrics-model', status: '200' })).to.equal(3);
    // A call refused from its headers (here: the credit limit) is answered before its body is read: no model label.
    expect(moved('gateway_requests_total', { form: 'messages', model: 'none', status: '429' })).to.equal(1);
    expect(moved('gateway_requests_total', { form: 'messages', model: 'other', status: '404' })).to.equal(1);
    expect(moved('gateway_request_duration_seconds_count', { form: 'messages', model: 'metrics-model' })).to.equal(3);
    expect(moved('gateway_request_duration_seconds_count', { form: 'messages', model: 'none' })).to.equal(1);
    expect(moved('gateway_upstream_fallbacks_total', { provider: 'flaky', model: 'flaky-x', failure: 'http' })).to.equal(1);
    // The first call fell back to steady; flaky, healthy again, answered the next two.
    expect(moved('gateway_upstream_first_event_seconds_count', { provider: 'steady', model: 'steady-x' })).to.equal(1);
    expect(moved('gateway_upstream_first_event_seconds_count', { provider: 'flaky', model: 'flaky-x' })).to.equal(2);
    expect(moved('gateway_upstream_duration_seconds_count', { provider: 'steady', model: 'steady-x', outcome: 'ok' })).to.equal(1);
    expect(moved('gateway_upstream_duration_seconds_count', { provider: 'flaky', model: 'flaky-x', outcome: 'ok' })).to.equal(2);
    expect(moved('gateway_upstream_duration_seconds_count', { provider: 'flaky', model: 'flaky-x', outcome: 'error' })).to.equal(1);
    expect(moved('gateway_guardrail_hits_total', { rule: 'email' })).to.equal(1);
    expect(moved('gateway_credit_suspensions_total')).to.equal(1);
    expect(moved('gateway_usage_records_total', { status: 'ok' })).to.equal(3);
    // Every metered call's record was committed, and its reply waited some time for the group commit.
    expect(moved('gateway_usage_committed_total')).to.be.at.least(3);
    expect(moved('gateway_usage_commit_wait_seconds_total')).to.be.greaterThan(0);
    expect(after).to.match(/^gateway_usage_queue_depth \d+$/m);
    expect(after).to.match(/^process_cpu_user_seconds_total /m);
    expect(after).to.match(/^nodejs_eventloop_lag_seconds /m);

    for (const secret of [key.api_key, key.api_key_id, brokeKey.api_key, brokeKey.api_key_id, owner.token, owner.accountId, broke.accountId, 'sk-metrics-upstream']) {
      expect(after, 'metrics output').to.not.include(secret);
    }
    expect(after).to.not.include('ops-metrics@example.com');
    expect(after).to.not.include('zebra');
    expect(after).to.not.include('no-such-model-typed-by-a-caller');
  });
});

describe('metrics: GATEWAY_METRICS_TOKEN', () => {
  let t: TestApp;
  const token = 'scrape-token-0123456789abcdef';

  before(async () => {
    t = await startTestApp({ env: { GATEWAY_METRICS_TOKEN: token } });
  });
  after(async () => t?.close());

  it('answers a scrape without the bearer token, or with another one, 401; with it, the metrics', async () => {
    expect((await fetch(`${t.baseUrl}/metrics`)).status).to.equal(401);
    const wrong = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token.slice(0, -1)}x` } });
    expect(wrong.status).to.equal(401);
    expect(await wrong.text()).to.not.include('gateway_');
    const right = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(right.status).to.equal(200);
    expect(await right.text()).to.match(/^gateway_usage_queue_depth \d+$/m);
  });
});
