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
      ['reply to noreply.team@example.com', 'noreply.team@example.com'],
      ['mynoreply@example.com', 'mynoreply@example.com'],
    ],
    misses: [
      'user@localhost',
      'user@example',
      '@example.com',
      'user@.com',
      'user@example.c',
      'user at example dot com',
      'npm i @scope/package',
      // No-reply mailboxes name no person (Claude Code's commit attribution uses one).
      'Co-Authored-By: Claude Code <noreply@anthropic.com>',
      'from no-reply@accounts.example.com',
      'DoNotReply@bank.example.cn',
      'do_not_reply@example.org',
    ],
  });
});
