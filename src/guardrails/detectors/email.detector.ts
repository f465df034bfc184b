import type { Detector, DetectorMatch } from '../detector.types';

// Addresses with a dotted domain and an alphabetic TLD; `user@localhost` is
// not PII worth masking and would mostly hit code samples. Lengths are capped
// (64-char local part, up to four 63-char labels) so the streaming window
// stays bounded. A trailing dot is allowed: sentences end after addresses.
//
// The scan starts from each "@" rather than running one regex over the text:
// a regex would try every word start as a local part, which made this the
// slowest detector on ordinary prose.
const LOCAL_MAX = 64;
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const DOMAIN = new RegExp(`(?:${LABEL}\\.){1,4}[A-Za-z]{2,24}(?![A-Za-z0-9-])`, 'y');

/** A-Z a-z 0-9 . _ % + - */
function isLocalChar(code: number): boolean {
  return (
    (code >= 97 && code <= 122) ||
    (code >= 65 && code <= 90) ||
    (code >= 48 && code <= 57) ||
    code === 46 || code === 95 || code === 37 || code === 43 || code === 45
  );
}

export const emailDetector: Detector = {
  rule: 'email',
  category: 'pii',
  // 64 + "@" + 4 × (63 + ".") + 24
  maxMatchLength: LOCAL_MAX + 1 + 4 * 64 + 24,
  find(text) {
    const found: DetectorMatch[] = [];
    let lastEnd = 0;
    for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
      // The local part is the whole run of local chars before "@"; an
      // over-long run is not an address, and no part of it is either.
      let start = at;
      while (start > 0 && at - start <= LOCAL_MAX && isLocalChar(text.charCodeAt(start - 1))) start--;
      if (start === at || at - start > LOCAL_MAX || start < lastEnd) continue;
      DOMAIN.lastIndex = at + 1;
      if (DOMAIN.exec(text) === null) continue;
      lastEnd = DOMAIN.lastIndex;
      found.push({ start, end: lastEnd });
      at = lastEnd - 1;
    }
    return found;
  },
};
