import type { DetectorMatch } from '../detector.types';

/**
 * What a check makes of a regex candidate: accept it whole (`true`), reject
 * it (`false`), or accept only its first N chars (a number).
 */
export type CandidateCheck = (match: RegExpExecArray) => boolean | number;

/**
 * All matches of a global (`g`) pattern starting at or after `from`,
 * optionally vetted by a check such as a checksum. The text before `from`
 * is still there for the pattern's lookbehind. After a rejected candidate
 * the scan resumes one char later, not after the candidate, so a rejected
 * candidate never hides a valid match that starts inside it (the streaming
 * filter resumes scans at later offsets and must see the same matches as a
 * whole-text scan).
 */
export function regexMatches(pattern: RegExp, text: string, check?: CandidateCheck, from = 0): DetectorMatch[] {
  const found: DetectorMatch[] = [];
  pattern.lastIndex = from;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const verdict = check === undefined ? true : check(match);
    const length = verdict === true ? match[0].length : verdict === false ? 0 : verdict;
    if (length > 0) {
      found.push({ start: match.index, end: match.index + length });
      pattern.lastIndex = match.index + length;
    } else {
      pattern.lastIndex = match.index + 1;
    }
  }
  return found;
}

/** Escapes a literal for use inside a RegExp (also valid under the `u` flag). */
export function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
