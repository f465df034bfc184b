import { expect } from 'chai';
import { retryAfterMs } from '../../../src/providers/retry-after';

describe('retry-after of an upstream error reply', () => {
  const now = Date.parse('2026-12-01T10:00:00Z');
  const table: Array<[string, Record<string, string | string[]>, number | undefined]> = [
    ['none', {}, undefined],
    ['whole seconds', { 'retry-after': '7' }, 7_000],
    ['fractional seconds', { 'retry-after': '0.25' }, 250],
    ['an HTTP-date', { 'retry-after': 'Tue, 01 Dec 2026 10:00:30 GMT' }, 30_000],
    ['an HTTP-date in the past', { 'retry-after': 'Tue, 01 Dec 2026 09:59:00 GMT' }, undefined],
    ['milliseconds', { 'retry-after-ms': '1500' }, 1_500],
    ['fractional milliseconds, rounded up', { 'retry-after-ms': '12.2' }, 13],
    ['both: the longer wins (seconds)', { 'retry-after': '7', 'retry-after-ms': '6500' }, 7_000],
    ['both: the longer wins (milliseconds)', { 'retry-after': '1', 'retry-after-ms': '1800' }, 1_800],
    ['zero', { 'retry-after': '0' }, undefined],
    ['garbage', { 'retry-after': 'soon', 'retry-after-ms': '-5' }, undefined],
    ['a negative number', { 'retry-after': '-3' }, undefined],
    ['padded', { 'retry-after': ' 3 ' }, 3_000],
    ['a repeated header: the first', { 'retry-after-ms': ['200', '900'] }, 200],
  ];
  for (const [title, headers, expected] of table) {
    it(title, () => {
      expect(retryAfterMs(headers, now)).to.equal(expected);
    });
  }
});
