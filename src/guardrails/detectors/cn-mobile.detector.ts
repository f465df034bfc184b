import type { Detector } from '../detector.types';
import { regexMatches } from './regex-scan.util';

// Mainland mobile numbers: 1[3-9] + 9 digits, written plain, as 3-4-4 groups
// separated by spaces or dashes, optionally behind +86 / 0086 / 86. The
// lookarounds keep an 11-digit window of a longer digit run (an order
// number, a card) from being taken for a phone.
const PATTERN = /(?<![\d+])(?:(?:\+|00)?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)/g;

/** Digits only, e.g. `8613800138000`: a mobile number with its country code. */
export const MOBILE_DIGITS = /^(?:0086|86)?1[3-9]\d{9}$/;

export const cnMobileDetector: Detector = {
  rule: 'cn-mobile',
  category: 'pii',
  // "0086 138 0013 8000": 4 + 1 + 11 + 2
  maxMatchLength: 18,
  find(text) {
    return regexMatches(PATTERN, text);
  },
};
