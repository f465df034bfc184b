import { expect } from 'chai';
import { encode } from 'gpt-tokenizer';
import { countTokens, countTokensYielding } from '../../src/tokenizer';

describe('countTokens', () => {
  it('counts a long text piece by piece to exactly the whole count when it has spaces', () => {
    const text = 'The quick brown fox, 42 times: jumps over the lazy dog. '.repeat(6000);
    expect(text.length).to.be.greaterThan(300_000);
    expect(countTokens(text)).to.equal(encode(text).length);
  });

  it('stays within a few tokens of the whole count for long text without spaces', () => {
    const text = '请把下面的会议纪要整理成三条要点保留每一个决定和负责人😀'.repeat(8000);
    const whole = encode(text).length;
    expect(Math.abs(countTokens(text) - whole)).to.be.at.most(20);
  });

  it('is zero for empty text and exact for short text', () => {
    expect(countTokens('')).to.equal(0);
    expect(countTokens('Hello there.')).to.equal(encode('Hello there.').length);
  });

  it('counts off the event loop (countTokensYielding) to the same figure as countTokens, the loop turning meanwhile', async () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `ledger${i} 计费准确 ${i % 9 === 0 ? '\n' : ''}`).join(' ') + '😀'.repeat(5_000);
    let turns = 0;
    const ticking = setInterval(() => turns++, 1);
    try {
      expect(await countTokensYielding(text)).to.equal(countTokens(text));
    } finally {
      clearInterval(ticking);
    }
    expect(turns, 'timers ran while the worker counted').to.be.greaterThan(0);
    expect(await countTokensYielding('')).to.equal(0);
    expect(await countTokensYielding('hello world')).to.equal(countTokens('hello world'));
  });
});

