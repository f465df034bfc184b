import { cnMobileDetector } from '../../../../src/guardrails';
import { detectorTable } from '../guardrail-samples';

describe('cn-mobile detector', () => {
  detectorTable(cnMobileDetector, {
    matches: [
      ['call 13800138000 today', '13800138000'],
      ['手机：19912345678，', '19912345678'],
      ['138 0013 8000', '138 0013 8000'],
      ['138-0013-8000', '138-0013-8000'],
      ['+86 138 0013 8000', '+86 138 0013 8000'],
      ['+8613800138000', '+8613800138000'],
      ['008613800138000', '008613800138000'],
      ['tel 86-13800138000', '86-13800138000'],
    ],
    misses: [
      '1380013800', // 10 digits
      '138001380001', // 12 digits
      '12800138000', // 12x is not a mobile prefix
      '11800138000',
      'order 2013800138000123', // inside a longer run
      '913800138000',
      '138 0013 800',
    ],
  });
});
