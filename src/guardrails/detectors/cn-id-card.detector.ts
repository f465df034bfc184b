import type { Detector } from '../detector.types';
import { assert, char, earliestOpenStart, findRegExp, group, openPrefixRegExp, repeat, seq } from './pattern.util';
import { regexMatches } from './regex-scan.util';

// PRC resident identity number (GB 11643): 6-digit area code, YYYYMMDD birth
// date, 3-digit sequence, ISO 7064 MOD 11-2 check character. The regex only
// shapes the candidate; date and checksum are verified in code so a random
// 18-digit number is not taken for an ID.
const DIGIT = char('\\d');
const ID = seq(
  assert('(?<!\\d)'),
  group(seq(char('[1-8]'), repeat(DIGIT, 5, 5))),
  group(repeat(DIGIT, 4, 4)),
  group(repeat(DIGIT, 2, 2)),
  group(repeat(DIGIT, 2, 2)),
  repeat(DIGIT, 3, 3),
  char('[\\dXx]'),
  assert('(?!\\d)'),
);
const PATTERN = findRegExp(ID);
// Checksum and date are left out: a run is held until it is long enough to check.
const OPEN = openPrefixRegExp(ID);

const WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2] as const;
const CHECK_CHARS = '10X98765432';

/** The MOD 11-2 check character for the first 17 digits of an ID number. */
export function cnIdCheckChar(first17: string): string {
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (first17.charCodeAt(i) - 48) * (WEIGHTS[i] ?? 0);
  return CHECK_CHARS.charAt(sum % 11);
}

function isPlausibleBirthDate(year: number, month: number, day: number, now: Date): boolean {
  if (year < 1900) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC rolls 31 February over into March; a real date survives the round trip.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return false;
  return date.getTime() <= now.getTime();
}

export const cnIdCardDetector: Detector = {
  rule: 'cn-id-card',
  category: 'pii',
  find(text, from) {
    const now = new Date();
    return regexMatches(
      PATTERN,
      text,
      (match) => {
        const id = match[0];
        if (!isPlausibleBirthDate(Number(match[2]), Number(match[3]), Number(match[4]), now)) return false;
        return cnIdCheckChar(id) === id.charAt(17).toUpperCase();
      },
      from,
    );
  },
  holdFrom(text, from) {
    return earliestOpenStart(OPEN, text, from);
  },
};
