// Where each detector says a match could still be under way: never later than
// a place where more text could still make or change a match (else the stream
// would let it out), and, on text that cannot start one, nowhere at all.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  apiSecretDetector,
  bankCardDetector,
  cnIdCardDetector,
  cnMobileDetector,
  createBlockListDetector,
  defaultDetectors,
  emailDetector,
  promptInjectionDetector,
  type Detector,
} from '../../../src/guardrails';
import { ADVERSARIAL_BLOCK_LIST, adversarialText } from './guardrail-arbitraries';
import { PEM_KEY, holdViolation } from './guardrail-samples';

const blockList = createBlockListDetector(ADVERSARIAL_BLOCK_LIST);

/** [text so far, where the hold starts] */
const HOLDS: ReadonlyArray<readonly [Detector, string, number]> = [
  [cnMobileDetector, 'call 138', 5],
  [cnMobileDetector, 'call +8', 5],
  [cnMobileDetector, 'x 138 0013 80', 2],
  [cnMobileDetector, '13800138000', 0], // whole, but one more digit would cancel it
  [cnMobileDetector, 'call 1380013800 ', 16],
  [cnMobileDetector, 'call 123', 8],
  [cnIdCardDetector, '11010519880517123', 0],
  [cnIdCardDetector, '11010519880517123X', 0],
  [cnIdCardDetector, '11010519880517123X.', 19],
  [cnIdCardDetector, 'no 0101', 7],
  [bankCardDetector, 'card 4111 111', 5],
  [bankCardDetector, '4111 11111', 5],
  [bankCardDetector, '4111 1111 1111 1111 1', 0],
  [bankCardDetector, 'pay 12345678901234567890', 24],
  [emailDetector, 'mail jo', 5],
  [emailDetector, 'mail john@', 5],
  [emailDetector, 'mail john@exa', 5],
  [emailDetector, 'mail john@example.com', 5],
  [emailDetector, 'mail john@example.com.', 5],
  [emailDetector, 'mail john@example.com ', 22],
  [emailDetector, 'x@y', 0],
  [emailDetector, '@abc', 1],
  [emailDetector, 'a b', 2],
  [emailDetector, '邮箱：', 3],
  [emailDetector, 'a'.repeat(65), 65],
  [emailDetector, 'john@ and', 6],
  [apiSecretDetector, 'use sk-', 4],
  [apiSecretDetector, 'use sk-learn-is-great ', 22],
  [apiSecretDetector, 'the task-', 8], // "-" could begin "-----BEGIN"
  [apiSecretDetector, 'the task-x', 10],
  [apiSecretDetector, 'AKIA', 0],
  [apiSecretDetector, 'xAKIA', 5],
  [apiSecretDetector, 'k -----BEG', 2],
  [apiSecretDetector, 'k -----BEGIN PRIVATE KEY-----\nMIIE', 2],
  [apiSecretDetector, `${PEM_KEY} ok`, PEM_KEY.length + 3],
  [apiSecretDetector, '---', 0],
  [apiSecretDetector, '---\n', 4],
  [promptInjectionDetector, 'please ign', 7],
  [promptInjectionDetector, 'please IGNORE  all', 7],
  [promptInjectionDetector, 'please ignore the compiler', 26],
  [promptInjectionDetector, 'design', 6],
  [promptInjectionDetector, '请忽略之前', 1],
  [promptInjectionDetector, '你现在是', 0],
  [promptInjectionDetector, 'ｉｇｎｏｒｅ', 6],
  [blockList, 'the forbi', 4],
  [blockList, 'FORBIDDE', 0],
  [blockList, 'forbidx', 7],
  [blockList, 'forbids', 6], // "s" could begin "straße"
  [blockList, 'abidd', 1],
  [blockList, 'STRAẞ', 0],
  [blockList, 'strasse', 7],
];

describe('guardrails: where a match could still be under way (holdFrom)', () => {
  for (const [detector, text, hold] of HOLDS) {
    it(`${detector.rule}: ${JSON.stringify(text)} is held from ${hold}`, () => {
      expect(detector.holdFrom(text, 0)).to.equal(hold);
    });
  }

  it('holds nothing of Chinese prose, for any detector', () => {
    const prose = '感谢您的提问。简单来说，每次发布后缓存都会重建，因此最初几个请求会比较慢。';
    for (const detector of defaultDetectors(ADVERSARIAL_BLOCK_LIST)) expect(detector.holdFrom(prose, 0), detector.rule).to.equal(prose.length);
  });

  it('answers from `from` on only', () => {
    expect(cnMobileDetector.holdFrom('138 then 139', 4)).to.equal(9);
    expect(emailDetector.holdFrom('abc', 1)).to.equal(3);
  });

  for (const detector of defaultDetectors(ADVERSARIAL_BLOCK_LIST)) {
    describe(detector.rule, () => {
      it('finds before its hold, in any cut of a text of look-alikes, exactly what the whole text has there', () => {
        fc.assert(
          fc.property(adversarialText, fc.nat(), (text, at) => {
            expect(holdViolation(detector, text, at % (text.length + 1))).to.equal(null);
          }),
          { numRuns: 400 },
        );
      });

      it('resumed at an offset no match crosses, finds what the whole-text scan finds from there', () => {
        fc.assert(
          fc.property(adversarialText, fc.nat(), (text, at) => {
            const from = at % (text.length + 1);
            const whole = detector.find(text);
            fc.pre(!whole.some((match) => match.start < from && match.end > from));
            expect(detector.find(text, from)).to.deep.equal(whole.filter((match) => match.start >= from));
          }),
          { numRuns: 400 },
        );
      });
    });
  }
});
