import type { Detector } from '../detector.types';
import { escapeRegExp, regexMatches } from './regex-scan.util';

/**
 * A detector for an operator's list of forbidden words: case-insensitive
 * literal matches, anywhere (no word boundaries, since most Chinese text has
 * none). Longer words are tried first so the longest listed word wins.
 */
export function createBlockListDetector(words: readonly string[]): Detector {
  const unique = [...new Set(words.map((word) => word.trim()).filter((word) => word.length > 0))];
  unique.sort((a, b) => b.length - a.length);
  const pattern = unique.length === 0 ? null : new RegExp(unique.map(escapeRegExp).join('|'), 'giu');
  return {
    rule: 'block-list',
    category: 'blocklist',
    maxMatchLength: unique[0]?.length ?? 0,
    find(text) {
      return pattern === null ? [] : regexMatches(pattern, text);
    },
  };
}
