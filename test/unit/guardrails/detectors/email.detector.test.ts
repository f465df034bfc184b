import { emailDetector } from '../../../../src/guardrails';
import { detectorTable } from '../guardrail-samples';

describe('email detector', () => {
  detectorTable(emailDetector, {
    matches: [
      ['write to user@example.com please', 'user@example.com'],
      ['first.last+tag@mail.example.co.uk.', 'first.last+tag@mail.example.co.uk'],
      ['UPPER@EXAMPLE.ORG', 'UPPER@EXAMPLE.ORG'],
      ['邮箱：zhang.san@163.com。', 'zhang.san@163.com'],
      ['<a_b-c%d@sub-domain.example.io>', 'a_b-c%d@sub-domain.example.io'],
    ],
    misses: [
      'user@localhost',
      'user@example',
      '@example.com',
      'user@.com',
      'user@example.c',
      'user at example dot com',
      'npm i @scope/package',
    ],
  });
});
