// The data plane's key check on the grants interface (in memory): a key is
// looked up by the hash of its secret once and cached; a change notice drops
// it so the next call sees the change; a secret that is no key is remembered
// as such; nothing is cached while the change feed is down.
import type { IncomingHttpHeaders } from 'node:http';
import { expect } from 'chai';
import { CHANNELS, type Channel, type ChangeFeed } from '../../../src/db/change-feed';
import { KeyAuthenticator } from '../../../src/data-plane/key-auth';
import { generateSecret, hashSecret, secretHint } from '../../../src/domain/keys/key-secret';
import type { CreditMonitor } from '../../../src/metering/credit-monitor';
import type { AppError } from '../../../src/errors';
import { MemoryApiKeyRepository } from '../../support/memory/api-keys';
import { rejection } from '../../support/memory/transactor';
import { account } from '../domain/keys/world';

class FakeFeed {
  connected = true;
  private readonly handlers = new Map<Channel, Array<(payload: string) => void>>();
  on(channel: Channel, handler: (payload: string) => void): void {
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), handler]);
  }
  onReset(): void {}
  emit(channel: Channel, payload: string): void {
    for (const handler of this.handlers.get(channel) ?? []) handler(payload);
  }
}

describe('KeyAuthenticator on the key grants', () => {
  let grants: MemoryApiKeyRepository;
  let feed: FakeFeed;
  let auth: KeyAuthenticator;
  let secret: string;
  const headers = (s: string): IncomingHttpHeaders => ({ authorization: `Bearer ${s}` });

  beforeEach(() => {
    grants = new MemoryApiKeyRepository();
    grants.accounts.set('acc_a', account('acc_a'));
    feed = new FakeFeed();
    const credit = { isOverLimit: async () => false, state: async () => 'open' };
    auth = new KeyAuthenticator(grants, feed as unknown as ChangeFeed, credit as unknown as CreditMonitor);
    secret = generateSecret();
    grants.rows.set('key_1', {
      id: 'key_1',
      accountId: 'acc_a',
      name: 'report-bot',
      dimension: '部门',
      status: 'active',
      modelScope: ['tsxt-general'],
      expiresAt: null,
      rateLimit: { requests_per_minute: 60, tokens_per_minute: null, concurrent_requests: null },
      secretHash: hashSecret(secret),
      secretHint: secretHint(secret),
      usedTokens: 0,
      lastUsedAt: null,
      createdAt: new Date(),
      cancelledAt: null,
      rotatedFrom: null,
      rotatedTo: null,
      cancelsAt: null,
    });
  });

  it('looks a key up by the hash of its secret once, then serves it from the cache', async () => {
    const key = await auth.authenticate(headers(secret));
    expect(key).to.include({ keyId: 'key_1', keyName: 'report-bot' });
    expect(key.account.id).to.equal('acc_a');
    expect([...key.modelScope]).to.deep.equal(['tsxt-general']);
    expect(key.rateLimit).to.deep.equal({ requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: null });
    await auth.authenticate(headers(secret));
    expect(grants.lookups).to.deep.equal([`hash:${hashSecret(secret)}`]);
  });

  it('a change notice drops the cached key: the next call reads the change and is refused', async () => {
    await auth.authenticate(headers(secret));
    grants.rows.get('key_1')!.status = 'suspended';
    feed.emit(CHANNELS.keys, 'key_1');
    const error = (await rejection(auth.authenticate(headers(secret)))) as AppError;
    expect(error.code).to.equal('key_suspended');
    expect(grants.lookups.filter((l) => l.startsWith('hash:'))).to.have.length(2);
  });

  it('a key whose rotation grace has ended is refused at once, before any sweep', async () => {
    Object.assign(grants.rows.get('key_1')!, { rotatedTo: 'key_2', cancelsAt: new Date(Date.now() - 1) });
    expect(((await rejection(auth.authenticate(headers(secret)))) as AppError).code).to.equal('key_cancelled');
  });

  it('a well-formed secret that is no key is refused and remembered: one lookup for many tries', async () => {
    const stranger = generateSecret();
    for (let i = 0; i < 3; i++) expect(((await rejection(auth.authenticate(headers(stranger)))) as AppError).code).to.equal('invalid_api_key');
    expect(grants.lookups).to.have.length(1);
  });

  it('caches nothing while the change feed is down', async () => {
    feed.connected = false;
    await auth.authenticate(headers(secret));
    await auth.authenticate(headers(secret));
    expect(grants.lookups).to.have.length(2);
  });

  it('a call in flight is cut when its key is cancelled (read by id)', async () => {
    const key = await auth.authenticate(headers(secret));
    const cuts: string[] = [];
    key.watch?.((refusal) => cuts.push(refusal.code));
    grants.rows.get('key_1')!.status = 'cancelled';
    feed.emit(CHANNELS.keys, 'key_1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(grants.lookups).to.include('id:key_1');
    expect(cuts).to.deep.equal(['key_cancelled']);
  });
});
