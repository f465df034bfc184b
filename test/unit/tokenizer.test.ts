import { expect } from 'chai';
import { encode } from 'gpt-tokenizer';
import { countTokens } from '../../src/tokenizer';

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
});
