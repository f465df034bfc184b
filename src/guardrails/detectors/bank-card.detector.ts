import type { Detector } from '../detector.types';
import { MOBILE_DIGITS } from './cn-mobile.detector';
import { alt, assert, char, earliestOpenStart, findRegExp, openPrefixRegExp, optional, repeat, seq } from './pattern.util';
import { regexMatches } from './regex-scan.util';

// Payment card numbers: 13-19 digits, plain or grouped by fours, passing Luhn.
// One in ten random digit strings passes Luhn, so a 13-15 digit string that
// is really a mobile number with its country code is left to cn-mobile; from
// 16 digits on (ID-card length included) a Luhn-valid number is treated as a
// card, as issuers do use those lengths. A trailing X belongs to an ID number.
const DIGIT = char('\\d');
const SEPARATOR = char('[ -]');
const CARD = seq(
  assert('(?<!\\d)'),
  alt(
    repeat(DIGIT, 13, 19),
    seq(repeat(DIGIT, 4, 4), repeat(seq(SEPARATOR, repeat(DIGIT, 4, 4)), 2, 3), optional(seq(SEPARATOR, repeat(DIGIT, 1, 4)))),
  ),
  assert('(?![\\dXx])'),
);
const PATTERN = findRegExp(CARD);
// Luhn is left out: a run is held until it is long enough to check.
const OPEN = openPrefixRegExp(CARD);

/** True when the digit string passes the Luhn (mod 10) check. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

function isCardNumber(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19) return false;
  if (digits.length < 16 && MOBILE_DIGITS.test(digits)) return false;
  return passesLuhn(digits);
}

const SEPARATORS = /[ -]/g;

/**
 * A grouped run may carry a trailing group that is not part of the card
 * ("4111 1111 1111 1111 123 more"): try the whole run, then shorter runs
 * ending at a group boundary. Returns the accepted length.
 */
function longestCardPrefix(candidate: string): number | false {
  for (let end = candidate.length; end > 0; end = Math.max(candidate.lastIndexOf(' ', end - 1), candidate.lastIndexOf('-', end - 1))) {
    if (isCardNumber(candidate.slice(0, end).replace(SEPARATORS, ''))) return end;
  }
  return false;
}

export const bankCardDetector: Detector = {
  rule: 'bank-card',
  category: 'pii',
  find(text, from) {
    return regexMatches(PATTERN, text, (match) => longestCardPrefix(match[0]), from);
  },
  holdFrom(text, from) {
    return earliestOpenStart(OPEN, text, from);
  },
};
