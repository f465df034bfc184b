import { cnIdCardDetector } from '../../../../src/guardrails';
import { detectorTable, idCard } from '../guardrail-samples';

describe('cn-id-card detector', () => {
  const valid = idCard('44030619900101123');
  detectorTable(cnIdCardDetector, {
    matches: [
      ['11010519491231002X', '11010519491231002X'],
      ['身份证号：11010519491231002x，请核对', '11010519491231002x'],
      [`id ${valid}.`, valid],
      [`born on a leap day ${idCard('51010720000229123')}`, idCard('51010720000229123')],
    ],
    misses: [
      // bad check character
      '110105194912310021',
      valid.slice(0, 17) + ((Number(valid.at(-1)) + 1) % 10),
      // impossible or implausible birth dates, with a correct check char
      idCard('11010519490231002'), // 31 February
      idCard('11010519491331002'), // month 13
      idCard('11010518991231002'), // before 1900
      idCard('11010520991231002'), // in the future
      // area code must start 1-8
      idCard('91010519491231002'),
      idCard('01010519491231002'),
      // wrong lengths and longer digit runs
      '11010519491231002',
      `7${valid}`,
      `${valid}7`,
      `${valid}${valid}`,
    ],
  });
});
