// The streaming filter must behave as if it had seen the whole text at once,
// however the upstream happens to chunk it.
import { expect } from 'chai';
import fc from 'fast-check';
import type { CanonicalEvent } from '../../../src/core/canonical';
import {
  createGuardrails,
  defaultDetectors,
  resolvePolicies,
  type Detector,
  type GuardrailPolicy,
  type Guardrails,
} from '../../../src/guardrails';
import { chars, chunk, chunkSizes, filler, piiSample, sensitiveSample } from './guardrail-arbitraries';
import { BASE62, PEM_KEY, idCard, luhnNumber, pemBodyLines, pemKey } from './guardrail-samples';

interface Sampled {
  text: string;
  samples: string[];
}

/** Filler with samples embedded, each set off by spaces, after a long lead-in so that release and rescans happen. */
const sampledText = (leadMax: number, sample: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.nat(leadMax), fc.array(fc.tuple(filler(40), sample), { minLength: 1, maxLength: 4 }), filler(40))
    .map(([lead, parts, tail]): Sampled => ({
      text: 'lorem ipsum 你好 '.repeat(Math.ceil(lead / 15)).slice(0, lead) + parts.map(([before, sample]) => `${before} ${sample} `).join('') + tail,
      samples: parts.map(([, sample]) => sample),
    }));

/** Streams the chunks as one text block; returns every emitted event. */
function stream(guardrails: Guardrails, chunks: readonly string[], check?: (releasedSoFar: string) => void) {
  const filter = guardrails.createOutputFilter();
  const out: CanonicalEvent[] = [];
  let releasedSoFar = '';
  const push = (event: CanonicalEvent) => {
    for (const emitted of filter.push(event)) {
      out.push(emitted);
      if (emitted.type === 'text_delta') releasedSoFar += emitted.text;
    }
    check?.(releasedSoFar);
  };
  push({ type: 'message_start', id: 'm', model: 'standard' });
  push({ type: 'block_start', index: 0, block: { type: 'text' } });
  for (const piece of chunks) push({ type: 'text_delta', index: 0, text: piece });
  push({ type: 'block_stop', index: 0 });
  push({ type: 'usage', usage: { output: 10 } });
  push({ type: 'message_stop', stopReason: 'end_turn' });
  return { out, released: releasedSoFar, filter };
}

/** What the input check makes of the whole text at once: the reference for the streamed result. */
function wholeText(guardrails: Guardrails, text: string) {
  const inspect = guardrails.inputInspector();
  return { redacted: inspect.text(text, 'system'), hits: inspect.hits };
}

const PII_AND_SECRETS = ['cn-id-card', 'cn-mobile', 'bank-card', 'email', 'api-secret'];

function withPolicy(detectors: Detector[], policy: GuardrailPolicy): Guardrails {
  return createGuardrails({ detectors, policies: Object.fromEntries(PII_AND_SECRETS.map((rule) => [rule, policy])) });
}

describe('guardrails: streamed output equals the whole-text result (property)', () => {
  const defaults = createGuardrails({ detectors: defaultDetectors(['forbidden']), policies: resolvePolicies() });
  const piiOnly = createGuardrails({
    detectors: defaultDetectors([]).filter((detector) => detector.rule !== 'api-secret'),
    policies: resolvePolicies(),
  });

  for (const [name, guardrails, leadMax, sample] of [
    ['default detectors', defaults, 3000, sensitiveSample],
    ['PII detectors only', piiOnly, 900, piiSample],
  ] as const) {
    it(`redacts: ${name}, random chunks`, () => {
      fc.assert(
        fc.property(sampledText(leadMax, sample), chunkSizes, ({ text, samples }, sizes) => {
          const whole = wholeText(guardrails, text);
          const { released, filter, out } = stream(guardrails, chunk(text, sizes), (soFar) => {
            // Released text is final: it is always a prefix of the full redacted text.
            expect(whole.redacted.startsWith(soFar)).to.equal(true);
          });
          expect(released).to.equal(whole.redacted);
          expect(filter.hits).to.deep.equal(whole.hits);
          for (const raw of samples) expect(released).not.to.contain(raw);
          expect(out.slice(-3).map((event) => event.type)).to.deep.equal(['block_stop', 'usage', 'message_stop']);
        }),
      );
    });
  }

  it('redacts a fixed text split in two at every boundary, and char by char', () => {
    const card = luhnNumber('622202123456789');
    const samples = [
      idCard('11010519880517123'),
      '+86 139 1234 5678',
      `${card.slice(0, 4)}-${card.slice(4, 8)}-${card.slice(8, 12)}-${card.slice(12)}`,
      'li.lei@example.cn',
      `tsxt-${'aB3'.repeat(15)}x`,
    ];
    const text = `客户 ${samples[0]} 电话 ${samples[1]}, card ${samples[2]}; mail ${samples[3]}. key ${samples[4]}\n${PEM_KEY}\nend`;
    const whole = wholeText(defaults, text);
    expect(Object.keys(whole.hits)).to.have.length(5);
    const splits = [...Array(text.length - 1).keys()].map((i) => [text.slice(0, i + 1), text.slice(i + 1)]);
    for (const chunks of [...splits, [...text]]) {
      const { released, filter } = stream(defaults, chunks);
      expect(released).to.equal(whole.redacted);
      expect(filter.hits).to.deep.equal(whole.hits);
      for (const sample of [...samples, PEM_KEY]) expect(released).not.to.contain(sample);
    }
  });

  it('blocks: no sample text is ever released, usage still passes, and the message ends in a refusal', () => {
    const blocking = withPolicy(defaultDetectors([]), 'block');
    fc.assert(
      fc.property(sampledText(6000, sensitiveSample), chunkSizes, ({ text }, sizes) => {
        const firstMatch = Math.min(...defaultDetectors([]).flatMap((detector) => detector.find(text).map((match) => match.start)));
        const { out, released, filter } = stream(blocking, chunk(text, sizes));
        // Whatever went out lies before the first sensitive value.
        expect(text.slice(0, firstMatch).startsWith(released)).to.equal(true);
        expect(filter.blocked).to.be.oneOf(PII_AND_SECRETS);
        expect(out.filter((event) => event.type === 'usage')).to.have.length(1);
        expect(out.at(-1)).to.deep.equal({ type: 'message_stop', stopReason: 'refusal' });
        expect(out.filter((event) => event.type === 'block_stop')).to.have.length(1);
      }),
    );
  });

  it('matches the whole-text scan even with digits and punctuation right next to the samples', () => {
    const noisy = fc
      .tuple(fc.array(fc.tuple(chars('0123456789 -+@._abcxyz你', 0, 12), piiSample), { minLength: 1, maxLength: 5 }), fc.nat(700))
      .map(([parts, lead]) => 'x1 '.repeat(lead) + parts.map(([before, sample]) => before + sample).join(''));
    fc.assert(
      fc.property(noisy, chunkSizes, (text, sizes) => {
        const whole = wholeText(piiOnly, text);
        const { released, filter } = stream(piiOnly, chunk(text, sizes));
        expect(released).to.equal(whole.redacted);
        expect(filter.hits).to.deep.equal(whole.hits);
      }),
      { numRuns: 300 },
    );
  });

  describe('private keys of 3–4 kB, split at random', () => {
    const BASE64 = `${BASE62}+/`;
    const label = fc.constantFrom('RSA PRIVATE KEY', 'PRIVATE KEY', 'EC PRIVATE KEY', 'OPENSSH PRIVATE KEY', 'ENCRYPTED PRIVATE KEY');
    const pem = fc
      .tuple(chars(BASE64, 3000, 4000), label)
      .map(([body, name]) => [`-----BEGIN ${name}-----`, ...(body.match(/.{1,64}/g) ?? []), `-----END ${name}-----`].join('\n'));

    interface KeyText {
      text: string;
      keys: string[];
      /** Where the first key begins: nothing from here on may be released in block mode. */
      firstKey: number;
    }

    /** Prose, one or two keys, prose; the last key may be cut off mid-body with nothing after it (fail closed). */
    const keyText = fc
      .tuple(fc.nat(1500), filler(60), fc.array(pem, { minLength: 1, maxLength: 2 }), fc.option(fc.integer({ min: 40, max: 3000 }), { nil: null }), filler(400))
      .map(([lead, between, keys, cut, tail]): KeyText => {
        const head = `${'lorem ipsum 你好 '.repeat(Math.ceil(lead / 15)).slice(0, lead)} ${between}\n`;
        const last = keys.length - 1;
        const parts = keys.map((key, i) => (i === last && cut !== null ? key.slice(0, cut) : key));
        const text = head + parts.join(`\n${between}\n`) + (cut === null ? `\n${tail}` : '');
        return { text, keys, firstKey: head.length };
      });

    // Mostly small deltas, sometimes one big enough to carry a whole key.
    const keyChunks = fc.array(fc.oneof({ arbitrary: fc.integer({ min: 1, max: 64 }), weight: 4 }, fc.integer({ min: 65, max: 4500 })), {
      minLength: 1,
      maxLength: 20,
    });
    const secretsAs = (policy: GuardrailPolicy) => withPolicy(defaultDetectors(['forbidden']), policy);
    const leaked = (released: string, keys: readonly string[]) =>
      keys.flatMap(pemBodyLines).filter((line) => line.length >= 16 && released.includes(line));

    it('redact: no line of a key body is ever released, and the result equals the whole-text scan', () => {
      const redacting = secretsAs('redact');
      fc.assert(
        fc.property(keyText, keyChunks, ({ text, keys }, sizes) => {
          const whole = wholeText(redacting, text);
          const { released, filter } = stream(redacting, chunk(text, sizes), (soFar) => {
            expect(leaked(soFar, keys)).to.deep.equal([]);
          });
          expect(released).to.equal(whole.redacted);
          expect(filter.hits).to.deep.equal(whole.hits);
          expect(leaked(released, keys)).to.deep.equal([]);
        }),
        { numRuns: 60 },
      );
    });

    it('block: nothing from the first key on is released, and the message ends in a refusal', () => {
      const blocking = secretsAs('block');
      fc.assert(
        fc.property(keyText, keyChunks, ({ text, firstKey }, sizes) => {
          const { out, released, filter } = stream(blocking, chunk(text, sizes));
          expect(text.slice(0, firstKey).startsWith(released)).to.equal(true);
          expect(filter.blocked).to.equal('api-secret');
          expect(out.at(-1)).to.deep.equal({ type: 'message_stop', stopReason: 'refusal' });
        }),
        { numRuns: 60 },
      );
    });

    it('redacts a 3.3 kB key and a cut-off one split in two at every boundary, and char by char', () => {
      const key = pemKey(3300);
      const cut = pemKey(3100, 11, 'EC PRIVATE KEY').slice(0, 2000);
      const text = `before ${key} middle 13800138000\n${cut}`;
      const whole = wholeText(defaults, text);
      expect(whole.redacted).to.equal('before [REDACTED:api-secret] middle [REDACTED:cn-mobile]\n[REDACTED:api-secret]');
      const splits = [...Array(text.length - 1).keys()].map((i) => [text.slice(0, i + 1), text.slice(i + 1)]);
      for (const chunks of [...splits, [...text]]) {
        const { released, filter } = stream(defaults, chunks);
        expect(released).to.equal(whole.redacted);
        expect(filter.hits).to.deep.equal(whole.hits);
      }
    });
  });
});
