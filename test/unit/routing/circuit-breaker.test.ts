import { expect } from 'chai';
import { CircuitBreaker, DEFAULT_RATE_LIMIT_MS, MAX_RATE_LIMIT_MS, type CircuitState } from '../../../src/routing/circuit-breaker';

/** A breaker on a clock the test moves by hand. */
function breaker(options = { threshold: 3, cooldownMs: 1000 }) {
  let now = 1_000_000;
  const b = new CircuitBreaker(options, () => now);
  return { b, tick: (ms: number) => (now += ms) };
}

type Step = ['fail' | 'ok' | 'acquire' | 'tick', number?];

describe('circuit breaker', () => {
  // Each row: steps on deployment "d", then its state and whether a call may go through.
  const table: Array<[string, Step[], CircuitState, boolean]> = [
    ['starts closed', [], 'closed', true],
    ['stays closed below the threshold', [['fail'], ['fail']], 'closed', true],
    ['opens after threshold consecutive failures', [['fail'], ['fail'], ['fail']], 'open', false],
    ['a success resets the count', [['fail'], ['fail'], ['ok'], ['fail'], ['fail']], 'closed', true],
    ['stays open during the cooldown', [['fail'], ['fail'], ['fail'], ['tick', 999]], 'open', false],
    ['goes half-open after the cooldown', [['fail'], ['fail'], ['fail'], ['tick', 1000]], 'half_open', true],
    ['lets one probe through while half-open', [['fail'], ['fail'], ['fail'], ['tick', 1000], ['acquire']], 'half_open', false],
    ['closes when the probe succeeds', [['fail'], ['fail'], ['fail'], ['tick', 1000], ['acquire'], ['ok']], 'closed', true],
    ['reopens at once when the probe fails', [['fail'], ['fail'], ['fail'], ['tick', 1000], ['acquire'], ['fail']], 'open', false],
    [
      'reopens for a full cooldown from the failed probe',
      [['fail'], ['fail'], ['fail'], ['tick', 1000], ['acquire'], ['tick', 500], ['fail'], ['tick', 999]],
      'open',
      false,
    ],
    ['gives a new probe once a lost one has had a cooldown', [['fail'], ['fail'], ['fail'], ['tick', 1000], ['acquire'], ['tick', 1000]], 'half_open', true],
  ];

  for (const [title, steps, state, acquirable] of table) {
    it(title, () => {
      const { b, tick } = breaker();
      for (const [step, ms] of steps) {
        if (step === 'fail') b.failure('d');
        else if (step === 'ok') b.success('d');
        else if (step === 'acquire') expect(b.tryAcquire('d'), 'probe').to.equal(true);
        else tick(ms ?? 0);
      }
      expect(b.state('d')).to.equal(state);
      expect(b.tryAcquire('d')).to.equal(acquirable);
    });
  }

  it('keeps one circuit per deployment', () => {
    const { b } = breaker();
    for (let i = 0; i < 3; i++) b.failure('a');
    expect(b.state('a')).to.equal('open');
    expect(b.state('b')).to.equal('closed');
    expect(b.tryAcquire('b')).to.equal(true);
  });

  describe('rate-limit windows (an upstream 429)', () => {
    it('refuses calls until the window the upstream asked for has passed, then lets them through', () => {
      const { b, tick } = breaker();
      expect(b.rateLimited('d', 7_000)).to.equal(7_000);
      expect(b.tryAcquire('d')).to.equal(false);
      tick(6_999);
      expect(b.limitedFor('d')).to.equal(1);
      expect(b.tryAcquire('d')).to.equal(false);
      tick(1);
      expect(b.limitedFor('d')).to.equal(0);
      expect(b.tryAcquire('d')).to.equal(true);
    });

    it('takes a default window when the upstream named none, and caps a far-off one', () => {
      const { b } = breaker();
      expect(b.rateLimited('a', undefined)).to.equal(DEFAULT_RATE_LIMIT_MS);
      expect(b.rateLimited('b', 86_400_000)).to.equal(MAX_RATE_LIMIT_MS);
    });

    it('only ever lengthens an open window', () => {
      const { b, tick } = breaker();
      b.rateLimited('d', 7_000);
      tick(1_000);
      expect(b.rateLimited('d', 2_000)).to.equal(6_000);
      expect(b.rateLimited('d', 9_000)).to.equal(9_000);
    });

    it('is not a failure: the deployment answered, so the failure count and an open circuit are cleared', () => {
      const { b, tick } = breaker();
      for (let i = 0; i < 3; i++) b.failure('d');
      tick(1_000);
      expect(b.tryAcquire('d'), 'half-open probe').to.equal(true);
      b.rateLimited('d', 500);
      expect(b.state('d')).to.equal('closed');
      tick(500);
      expect(b.tryAcquire('d')).to.equal(true);
      b.failure('d');
      b.failure('d');
      expect(b.state('d'), 'two failures after the window').to.equal('closed');
    });

    it('keeps a window per deployment, and a success elsewhere does not end it', () => {
      const { b } = breaker();
      b.rateLimited('a', 5_000);
      b.success('a');
      expect(b.tryAcquire('a')).to.equal(false);
      expect(b.tryAcquire('b')).to.equal(true);
    });
  });

  it('takes settings per deployment', () => {
    let now = 0;
    const b = new CircuitBreaker((id) => (id.startsWith('slow/') ? { threshold: 1, cooldownMs: 5000 } : { threshold: 2, cooldownMs: 100 }), () => now);
    b.failure('slow/m');
    b.failure('fast/m');
    expect([b.state('slow/m'), b.state('fast/m')]).to.deep.equal(['open', 'closed']);
    b.failure('fast/m');
    now += 100;
    expect([b.state('slow/m'), b.state('fast/m')]).to.deep.equal(['open', 'half_open']);
  });
});
