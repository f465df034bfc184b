// count_tokens is free for the caller (issue 15): counting a huge body must not
// hold the event loop for everyone, and one key cannot run many at once.
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';

describe('security: count_tokens', function () {
  this.timeout(120_000);
  let t: TestApp;
  let apiKey: string;
  before(async () => {
    t = await startTestApp();
    const owner = await createAccount(t);
    apiKey = (await createKey(t, owner.token)).api_key;
  });
  after(async () => {
    await t?.close();
  });

  // About 6 MB of varied prose: hundreds of milliseconds of tokenizer work.
  const huge = JSON.stringify({
    model: 'tsxt-general',
    messages: [{ role: 'user', content: Array.from({ length: 120_000 }, (_, i) => `line ${i} of the pasted report, revenue ${i * 7} and costs ${i * 3}.`).join('\n') }],
  });
  const count = () =>
    fetch(`${t.baseUrl}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
      body: huge,
    });

  it('answers /healthz while a huge count is still running', async () => {
    const order: string[] = [];
    const counting = count().then(async (response) => {
      order.push(`count ${response.status}`);
      return (await response.json()) as { input_tokens: number };
    });
    // Let the count's body arrive and its tokenizing begin.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const health = await fetch(`${t.baseUrl}/healthz`);
    order.push(`healthz ${health.status}`);
    const { input_tokens } = await counting;
    expect(input_tokens).to.be.greaterThan(1_000_000);
    expect(order).to.deep.equal(['healthz 200', 'count 200']);
  });

  it('runs at most two counts per key at once: a third gets 429 too_many_requests', async () => {
    const responses = await Promise.all([count(), count(), count(), count()]);
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 200).length).to.be.at.least(2);
    expect(statuses).to.include(429);
    const refused = responses.find((response) => response.status === 429)!;
    expect(refused.headers.get('retry-after')).to.equal('1');
    expect(((await refused.json()) as { error: { message: string } }).error.message).to.match(/At most 2 token counts/);
  });
});
