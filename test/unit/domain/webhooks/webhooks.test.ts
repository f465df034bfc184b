// Webhook building blocks without a network or database: the signature a
// receiver verifies, the retry schedule, which addresses are refused, and
// the rules of thresholds and event lists.
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { DEFAULT_BACKOFF, retryDelayMs } from '../../../../src/domain/webhooks/webhook-dispatcher';
import { parseEvents, parseThresholds, reachedThreshold } from '../../../../src/domain/webhooks/webhook-events';
import { signatureHeader, verifySignature } from '../../../../src/domain/webhooks/webhook-signer';
import { parseTarget, refusedAddress } from '../../../../src/domain/webhooks/webhook-target';
import type { AppError } from '../../../../src/errors';

const fieldOf = (work: () => unknown): string | undefined => {
  try {
    work();
  } catch (error) {
    return (error as AppError).field;
  }
  return undefined;
};

describe('webhooks (unit)', () => {
  it('signs "<t>.<body>" with HMAC-SHA256 as t=<unix>,v1=<hex>; verification refuses another body, secret or an old t', () => {
    const body = '{"id":"evt_1","type":"key.suspended","created_at":"2026-11-29T00:00:00.000Z","data":{}}';
    const header = signatureHeader('whsec_test', body, 1_790_000_000);
    expect(header).to.equal(`t=1790000000,v1=${createHmac('sha256', 'whsec_test').update(`1790000000.${body}`).digest('hex')}`);
    expect(verifySignature('whsec_test', body, header, 1_790_000_010)).to.equal(true);
    expect(verifySignature('whsec_other', body, header, 1_790_000_010)).to.equal(false);
    expect(verifySignature('whsec_test', `${body} `, header, 1_790_000_010)).to.equal(false);
    expect(verifySignature('whsec_test', body, header, 1_790_000_000 + 301), 'older than five minutes').to.equal(false);
    expect(verifySignature('whsec_test', body, 't=abc,v1=00', 1_790_000_000)).to.equal(false);
  });

  it('retries 10 s doubling up to 6 h with ±20 % jitter', () => {
    const exact = [1, 2, 3, 4, 12, 13].map((attempt) => retryDelayMs(attempt, DEFAULT_BACKOFF, () => 0.5));
    expect(exact).to.deep.equal([10_000, 20_000, 40_000, 80_000, 20_480_000, 6 * 3600_000]);
    expect(retryDelayMs(1, DEFAULT_BACKOFF, () => 0)).to.equal(8_000);
    expect(retryDelayMs(1, DEFAULT_BACKOFF, () => 1)).to.equal(12_000);
    const total = Array.from({ length: DEFAULT_BACKOFF.attempts - 1 }, (_, i) => retryDelayMs(i + 1, DEFAULT_BACKOFF, () => 0.5)).reduce((a, b) => a + b, 0);
    expect(total / 3600_000, 'hours from first to last attempt').to.be.within(5.5, 6);
  });

  const table: Array<[string, 'refused' | 'private' | 'public']> = [
    ['127.0.0.1', 'private'],
    ['127.5.6.7', 'private'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.128.0.1', 'public'],
    ['169.254.169.254', 'refused'],
    ['0.0.0.0', 'refused'],
    ['224.0.0.1', 'refused'],
    ['255.255.255.255', 'refused'],
    ['::1', 'private'],
    ['::', 'refused'],
    ['fe80::1', 'refused'],
    ['fd00::1', 'private'],
    ['ff02::1', 'refused'],
    ['::ffff:127.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'refused'],
    ['::ffff:8.8.8.8', 'public'],
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
  ];
  for (const [address, kind] of table) {
    it(`${address} is ${kind}`, () => {
      expect(refusedAddress(address, false) === null).to.equal(kind === 'public');
      expect(refusedAddress(address, true) === null, 'with GATEWAY_WEBHOOK_ALLOW_PRIVATE=1').to.equal(kind !== 'refused');
    });
  }

  it('accepts http(s) URLs without credentials only (400 naming url)', () => {
    expect(parseTarget('https://hooks.example.com/a?b=1').hostname).to.equal('hooks.example.com');
    for (const bad of ['ftp://example.com', 'https://u:p@example.com', 'https://u@example.com', 'file:///etc/passwd', '', 42, `https://example.com/${'a'.repeat(2048)}`]) {
      expect(fieldOf(() => parseTarget(bad)), String(bad)).to.equal('url');
    }
  });

  it('thresholds: 1–5 unique ascending integers 1–100; events: known, unique, non-empty', () => {
    expect(parseThresholds([80, 100])).to.deep.equal([80, 100]);
    expect(parseThresholds([1, 2, 3, 4, 100])).to.deep.equal([1, 2, 3, 4, 100]);
    for (const bad of [[], [100, 80], [50, 50], [0], [101], [1.5], ['80'], [1, 2, 3, 4, 5, 6], null]) expect(fieldOf(() => parseThresholds(bad)), JSON.stringify(bad)).to.equal('thresholds');
    expect(parseEvents(['key.expiring', 'credit.restored'])).to.deep.equal(['key.expiring', 'credit.restored']);
    for (const bad of [[], ['key.gone'], ['key.resumed', 'key.resumed'], 'key.resumed']) expect(fieldOf(() => parseEvents(bad)), JSON.stringify(bad)).to.equal('events');
  });

  it('the banner threshold is the highest reached, by exact integer arithmetic', () => {
    expect(reachedThreshold([80, 100], null, 10)).to.equal(null);
    expect(reachedThreshold([80, 100], 1000, 799)).to.equal(null);
    expect(reachedThreshold([80, 100], 1000, 800)).to.equal(80);
    expect(reachedThreshold([80, 100], 1000, 1000)).to.equal(100);
    expect(reachedThreshold([80], 9_007_199_254_740_991, 7_205_759_403_792_793)).to.equal(80);
  });
});
