import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import fc from 'fast-check';
import { estimateTokens } from '../../../src/routing/token-estimate';
import { countTokens } from '../../../src/tokenizer';

describe('prompt token estimate (complexity assessment)', () => {
  const samples: Record<string, string> = {
    english: 'Please summarise the following meeting notes into three bullet points, keeping every decision and owner.',
    chinese: '请把下面的会议纪要整理成三条要点，保留每一个决定和负责人，并指出还没有解决的问题。',
    mixed: '把这个 TypeScript 函数改成 async/await 的写法，并保留原来的错误处理逻辑。',
    code: readFileSync(new URL('../../../src/routing/circuit-breaker.ts', import.meta.url), 'utf8').slice(0, 3000),
    numbers: 'Order 1234567 shipped 2026-11-22 at 14:05; totals 99.95, 120.00 and 7.5.',
  };

  for (const [kind, text] of Object.entries(samples)) {
    it(`stays within 0.7–1.4× of the o200k count for ${kind} text`, () => {
      const ratio = estimateTokens(text) / countTokens(text);
      expect(ratio).to.be.within(0.7, 1.4);
    });
  }

  it('is zero for empty text and extrapolates a huge paste from its head', () => {
    expect(estimateTokens('')).to.equal(0);
    const unit = 'The quick brown fox jumps over the lazy dog. ';
    const one = estimateTokens(unit.repeat(80));
    expect(estimateTokens(unit.repeat(8000))).to.be.within(one * 99, one * 101);
  });

  it('counts exactly as the regular-expression definition of its runs, on any text', () => {
    // The definition: Latin words, digit runs, single CJK characters, whitespace runs, any other single character.
    const RUNS = /[A-Za-z]+|[0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]|\s+|[^\sA-Za-z0-9]/g;
    const reference = (text: string): number => {
      const sample = text.slice(0, 4000);
      let tokens = 0;
      for (const [run] of sample.matchAll(RUNS)) {
        const code = run.charCodeAt(0);
        if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) tokens += Math.ceil(run.length / 7);
        else if (code >= 48 && code <= 57) tokens += Math.ceil(run.length / 3);
        else if (code <= 32) tokens += run.length > 1 ? 1 : 0;
        else if (code >= 0x3040) tokens += 0.7;
        else tokens += 1;
      }
      return Math.round(sample.length === text.length ? tokens : (tokens * text.length) / sample.length);
    };
    const alphabet = ['a', 'Z', 'q', '7', '0', ' ', '  ', '\n', '\t', '\u00a0', '\u3000', '\ufeff', '\u2003', '中', 'あ', '한', '，', '.', '{', '\u0001', '\u0085', '😀', '\ud800', 'é'];
    const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 300 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(text, fc.string({ unit: 'binary', maxLength: 200 })), (sample) => {
        expect(estimateTokens(sample)).to.equal(reference(sample));
      }),
      { numRuns: 2000 },
    );
    const long = 'word 12 中文 '.repeat(900);
    expect(estimateTokens(long)).to.equal(reference(long));
  });
});
