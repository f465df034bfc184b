import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { estimateTokens } from '../../../src/routing/complexity';
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
});
