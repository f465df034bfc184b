import type { Detector, DetectorMatch } from '../detector.types';
import { assert, char, literal, optional, patternSource, repeat, seq, stickyPrefixRegExp } from './pattern.util';

// Addresses with a dotted domain and an alphabetic TLD; `user@localhost` is
// not PII worth masking and would mostly hit code samples. Lengths are capped
// (64-char local part, up to four 63-char labels). A trailing dot is allowed:
// sentences end after addresses.
//
// The scan starts from each "@" rather than running one regex over the text:
// a regex would try every word start as a local part, which made this the
// slowest detector on ordinary prose.
const LOCAL_MAX = 64;
const ALNUM = char('[A-Za-z0-9]');
const LABEL = seq(ALNUM, optional(seq(repeat(char('[A-Za-z0-9-]'), 0, 61), ALNUM)));
const DOMAIN_PATTERN = seq(repeat(seq(LABEL, literal('.')), 1, 4), repeat(char('[A-Za-z]'), 2, 24), assert('(?![A-Za-z0-9-])'));
const DOMAIN = new RegExp(patternSource(DOMAIN_PATTERN), 'y');
/** Four 63-char labels with their dots, and the TLD. */
const DOMAIN_MAX = 4 * 64 + 24;
/** Whether the text after an "@" could still become (or still change) a domain. */
const OPEN_DOMAIN = stickyPrefixRegExp(DOMAIN_PATTERN);

/** A-Z a-z 0-9 . _ % + - */
function isLocalChar(code: number): boolean {
  return (
    (code >= 97 && code <= 122) ||
    (code >= 65 && code <= 90) ||
    (code >= 48 && code <= 57) ||
    code === 46 || code === 95 || code === 37 || code === 43 || code === 45
  );
}

const AT = 64;

/**
 * Addresses that name no person: an automated sender's no-reply mailbox
 * (Claude Code's prompt tells the model to sign commits with one). Masking
 * them protects nobody and makes agents write "[REDACTED:email]" into their
 * commits.
 */
const NO_REPLY = /^(?:no[-_.]?reply|do[-_.]?not[-_.]?reply)$/i;

/** Start of the run of local chars that ends at `end`, looking back at most LOCAL_MAX + 1 chars. */
function localRunStart(text: string, end: number): number {
  let start = end;
  while (start > 0 && end - start <= LOCAL_MAX && isLocalChar(text.charCodeAt(start - 1))) start--;
  return start;
}

export const emailDetector: Detector = {
  rule: 'email',
  category: 'pii',
  lookalikes: true,
  find(text, from = 0) {
    const found: DetectorMatch[] = [];
    let lastEnd = from;
    for (let at = text.indexOf('@', from); at !== -1; at = text.indexOf('@', at + 1)) {
      // The local part is the whole run of local chars before "@"; an
      // over-long run is not an address, and no part of it is either.
      const start = localRunStart(text, at);
      if (start === at || at - start > LOCAL_MAX || start < lastEnd) continue;
      DOMAIN.lastIndex = at + 1;
      if (DOMAIN.exec(text) === null) continue;
      lastEnd = DOMAIN.lastIndex;
      if (!NO_REPLY.test(text.slice(start, at))) found.push({ start, end: lastEnd });
      at = lastEnd - 1;
    }
    return found;
  },
  /**
   * An address could still be under way only in the trailing run of local
   * chars (every domain char is one too): that run as a local part waiting
   * for its "@", or, right after an "@", a domain not yet over, whose local
   * part is the run before the "@".
   */
  holdFrom(text, from) {
    const end = text.length;
    let run = end;
    while (run > 0 && end - run <= DOMAIN_MAX && isLocalChar(text.charCodeAt(run - 1))) run--;
    let hold = run < end && end - run <= LOCAL_MAX && run >= from ? run : end;
    if (run > 0 && text.charCodeAt(run - 1) === AT) {
      const local = localRunStart(text, run - 1);
      const localLength = run - 1 - local;
      if (local >= from && localLength >= 1 && localLength <= LOCAL_MAX) {
        OPEN_DOMAIN.lastIndex = run;
        if (OPEN_DOMAIN.test(text)) hold = local;
      }
    }
    return hold;
  },
};
