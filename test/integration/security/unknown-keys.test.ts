// Made-up API keys (issue 15): a well-formed secret that is no key is looked
// up in the database once, then answered from a negative cache; a flood of
// distinct fakes queues for a few lookup slots instead of taking the pool.
import { expect } from 'chai';
import { generateSecret } from '../../../src/domain/keys/key-secret';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';

describe('security: unknown API keys', function () {
  this.timeout(60_000);
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  const lookups = async (outcome: string): Promise<number> => {
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    return Number(new RegExp(`^gateway_key_lookups_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  };
  const call = (key: string) =>
    fetch(`${t.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'tsxt-general', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('looks a made-up but well-formed key up once; the next 50 tries are answered 401 from the negative cache', async () => {
    const fake = generateSecret();
    const [dbBefore, cachedBefore] = [await lookups('not_found'), await lookups('not_found_cached')];
    for (let i = 0; i < 51; i += 1) expect((await call(fake)).status).to.equal(401);
    expect((await lookups('not_found')) - dbBefore).to.equal(1);
    expect((await lookups('not_found_cached')) - cachedBefore).to.equal(50);
  });

  it('keeps answering real keys while 300 distinct fake keys arrive at once, and each fake gets 401', async () => {
    const owner = await createAccount(t);
    const { api_key: real } = await createKey(t, owner.token);
    const fakes = Array.from({ length: 300 }, () => generateSecret());
    const [flood, answer] = await Promise.all([Promise.all(fakes.map((fake) => call(fake).then((response) => response.status))), call(real)]);
    expect(answer.status, await answer.text()).to.equal(200);
    expect(new Set(flood)).to.deep.equal(new Set([401]));
  });

  it('serves a key created after its secret was never seen, at once', async () => {
    const owner = await createAccount(t);
    const { api_key: fresh } = await createKey(t, owner.token);
    expect((await call(fresh)).status).to.equal(200);
  });
});
