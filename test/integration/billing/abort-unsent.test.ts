// The other side of abort billing (issue 27): a call whose request never got
// all its bytes out to the upstream costs 0, and its record says why
// (`aborted_before_upstream`). The upstream here accepts the connection and
// never reads it, so a body larger than the sockets' buffers stays unsent.
import net from 'node:net';
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { BUILTIN_PRICES } from '../../../src/routing/builtin-catalog';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { formBody, recordOfKey, until } from './upstream-billing-support';

describe('billing: a call cut before its request reached the upstream', function () {
  this.timeout(120_000);
  let t: TestApp;
  let unread: net.Server;
  const sockets: net.Socket[] = [];

  before(async () => {
    unread = net.createServer({ pauseOnConnect: true }, (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => unread.listen(0, '127.0.0.1', resolve));
    const { port } = unread.address() as net.AddressInfo;
    const route = { provider: 'deaf', model: 'gpt-deaf' };
    t = await startTestApp({
      env: { DEAF_UPSTREAM_KEY: 'sk-deaf' },
      catalog: {
        currency: 'CNY',
        prices: BUILTIN_PRICES,
        providers: { deaf: { type: 'openai', base_url: `http://127.0.0.1:${port}/v1`, api_key_env: 'DEAF_UPSTREAM_KEY', connect_timeout_ms: 30_000, idle_timeout_ms: 30_000 } },
        models: [{ name: 'b-deaf', display_name: 'deaf', routes: { light: [route], standard: [route], heavy: [route], thinking: [route] } }],
      },
    });
  });

  after(async () => {
    await t?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => unread?.close(resolve));
  });

  it('costs 0, is recorded client_aborted with error code aborted_before_upstream, and is not estimated', async () => {
    const owner = await createAccount(t);
    const key = await createKey(t, owner.token, { model_scope: ['b-deaf'] });
    // 18 MB (the data plane takes 20): far more than loopback buffers hold for a peer that reads nothing (4 MB sent, 128 KB received).
    const prompt = 'Numbers nobody will read:'.padEnd(18 * 1024 * 1024, ' one two three four five');
    const controller = new AbortController();
    const call = fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify(formBody('chat', 'b-deaf', prompt, true)),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await until(() => sockets.length > 0, 'the gateway to connect to the upstream', 60_000);
    // Time for the gateway to write what the socket takes; the rest of the body waits for a reader that never comes.
    await delay(500);
    controller.abort();
    await call;
    const record = await recordOfKey(key.api_key_id);
    expect(record).to.include({ status: 'client_aborted', error_code: 'aborted_before_upstream', estimated: false, raw_input_cache_miss: 0, raw_output: 0 });
    expect(Number(record.amount_micros)).to.equal(0);
  });
});
