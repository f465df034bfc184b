import type { Detector } from '../detector.types';
import { alt, assert, char, earliestOpenStart, findRegExp, literal, openPrefixRegExp, optional, repeat, seq } from './pattern.util';
import { regexMatches } from './regex-scan.util';

// Mainland mobile numbers: 1[3-9] + 9 digits, written plain, as 3-4-4 groups
// separated by spaces or dashes, optionally behind +86 / 0086 / 86. The
// lookarounds keep an 11-digit window of a longer digit run (an order
// number, a card) from being taken for a phone.
const DIGIT = char('\\d');
const SEPARATOR = char('[ -]');
const MOBILE = seq(
  assert('(?<![\\d+])'),
  optional(seq(optional(alt(literal('+'), literal('00'))), literal('86'), optional(SEPARATOR))),
  literal('1'),
  char('[3-9]'),
  DIGIT,
  repeat(seq(optional(SEPARATOR), repeat(DIGIT, 4, 4)), 2, 2),
  assert('(?!\\d)'),
);
const PATTERN = findRegExp(MOBILE);
const OPEN = openPrefixRegExp(MOBILE);

/** Digits only, e.g. `8613800138000`: a mobile number with its country code. */
export const MOBILE_DIGITS = /^(?:0086|86)?1[3-9]\d{9}$/;

export const cnMobileDetector: Detector = {
  rule: 'cn-mobile',
  category: 'pii',
  find(text, from) {
    return regexMatches(PATTERN, text, undefined, from);
  },
  holdFrom(text, from) {
    return earliestOpenStart(OPEN, text, from);
  },
};
