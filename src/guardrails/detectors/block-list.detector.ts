import type { Detector } from '../detector.types';
import { alt, earliestOpenStart, findRegExp, literal, openPrefixRegExp } from './pattern.util';
import { regexMatches } from './regex-scan.util';
import { readingOfText } from '../text-view';

/**
 * A detector for an operator's list of forbidden words: case-insensitive
 * literal matches, anywhere (no word boundaries, since most Chinese text has
 * none). Longer words are tried first so the longest listed word wins. The
 * stream is held back only from the longest suffix that begins a listed word
 * (a trie over the words, matched by the same case-insensitive regex engine).
 */
export function createBlockListDetector(words: readonly string[]): Detector {
  // Texts are read as their view (text-view.ts): a word is listed as it reads there too.
  const unique = [...new Set(words.map((word) => readingOfText(word.trim())).filter((word) => word.length > 0))];
  unique.sort((a, b) => b.length - a.length);
  const listed = alt(...unique.map(literal));
  const pattern = unique.length === 0 ? null : findRegExp(listed, 'iu');
  const open = unique.length === 0 ? null : openPrefixRegExp(listed, 'iu');
  return {
    rule: 'block-list',
    category: 'blocklist',
    find(text, from) {
      return pattern === null ? [] : regexMatches(pattern, text, undefined, from);
    },
    holdFrom(text, from) {
      return open === null ? text.length : earliestOpenStart(open, text, from);
    },
  };
}
