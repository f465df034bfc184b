import { expect } from 'chai';
import { createBlockListDetector } from '../../../../src/guardrails';
import { detectorTable } from '../guardrail-samples';

describe('block-list detector', () => {
  const detector = createBlockListDetector(['bad', 'BadWord', '违禁词', 'a.b', '  ']);

  detectorTable(detector, {
    matches: [
      ['this is BADWORD here', 'BADWORD'],
      ['so Bad', 'Bad'],
      ['含有违禁词的句子', '违禁词'],
      ['literal a.b only', 'a.b'],
    ],
    misses: ['nothing to see', 'axb is no literal match', '违禁', 'b a d'],
  });

  it('finds nothing with an empty list', () => {
    const empty = createBlockListDetector([]);
    expect(empty.find('anything bad')).to.deep.equal([]);
    expect(empty.holdFrom('anything ba', 0)).to.equal('anything ba'.length);
  });
});
