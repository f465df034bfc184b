// A detector's regex written once as a small tree, from which come both the
// regex that finds matches and the one that tells the streaming filter where
// a match could still be under way. Deriving both from one definition keeps
// them in step: the hold rule accepts every prefix the finder could go on to
// match, with the same flags, so the same case folding, classes and
// boundaries.
import { escapeRegExp } from './regex-scan.util';

export type Pattern =
  | { kind: 'literal'; text: string }
  /** Exactly one character, as a regex class or escape (`[0-9]`, `\\s`, `[^\\n]`). */
  | { kind: 'char'; source: string }
  /** A zero-width assertion (`\\b`, `(?<!\\d)`, `(?![\\w-])`), evaluated on the text around it. */
  | { kind: 'assert'; source: string }
  | { kind: 'group'; item: Pattern }
  | { kind: 'seq'; items: readonly Pattern[] }
  | { kind: 'alt'; items: readonly Pattern[] }
  | { kind: 'repeat'; item: Pattern; min: number; max: number; lazy: boolean };

export const literal = (text: string): Pattern => ({ kind: 'literal', text });
export const char = (source: string): Pattern => ({ kind: 'char', source });
export const assert = (source: string): Pattern => ({ kind: 'assert', source });
/** A capturing group, for a finder that reads its parts (a birth date). */
export const group = (item: Pattern): Pattern => ({ kind: 'group', item });
export const seq = (...items: Pattern[]): Pattern => ({ kind: 'seq', items });
export const alt = (...items: Pattern[]): Pattern => ({ kind: 'alt', items });
export const repeat = (item: Pattern, min: number, max: number, lazy = false): Pattern => ({ kind: 'repeat', item, min, max, lazy });
export const optional = (item: Pattern): Pattern => repeat(item, 0, 1);

/** The regex source that matches `pattern`. */
export function patternSource(pattern: Pattern): string {
  switch (pattern.kind) {
    case 'literal':
      return escapeRegExp(pattern.text);
    case 'char':
    case 'assert':
      return pattern.source;
    case 'group':
      return `(${patternSource(pattern.item)})`;
    case 'seq':
      return pattern.items.map(patternSource).join('');
    case 'alt':
      return `(?:${pattern.items.map(patternSource).join('|')})`;
    case 'repeat': {
      const count = pattern.min === pattern.max ? `{${pattern.min}}` : pattern.max === 1 && pattern.min === 0 ? '?' : `{${pattern.min},${pattern.max}}`;
      return `${atom(pattern.item)}${count}${pattern.lazy ? '?' : ''}`;
    }
  }
}

function atom(pattern: Pattern): string {
  return pattern.kind === 'char' || pattern.kind === 'group' ? patternSource(pattern) : `(?:${patternSource(pattern)})`;
}

/**
 * Regex source matching every non-empty prefix of every string `pattern`
 * matches, or null when there is none (an assertion alone). The caller
 * anchors it with `$`, so a prefix always runs to the end of the text. An
 * assertion the prefix stops at is not decided yet: only one that has text
 * after it is checked.
 */
function prefixSource(pattern: Pattern): string | null {
  switch (pattern.kind) {
    case 'literal':
      return literalPrefixes([pattern.text]);
    case 'char':
      return pattern.source;
    case 'assert':
      return null;
    case 'group':
      return prefixSource(pattern.item);
    case 'seq':
      return seqPrefix(pattern.items);
    case 'alt': {
      if (pattern.items.every((item) => item.kind === 'literal')) {
        return literalPrefixes(pattern.items.map((item) => (item as { text: string }).text));
      }
      const branches = pattern.items.map(prefixSource).filter((branch) => branch !== null);
      return branches.length === 0 ? null : `(?:${branches.join('|')})`;
    }
    case 'repeat': {
      if (pattern.max === 0) return null;
      if (pattern.item.kind === 'char') return `${pattern.item.source}{1,${pattern.max}}`;
      const last = prefixSource(pattern.item);
      if (last === null || pattern.max === 1) return last;
      // Up to max - 1 whole repetitions, then a prefix of one more.
      return `${atom(pattern.item)}{0,${pattern.max - 1}}${last}`;
    }
  }
}

function seqPrefix(items: readonly Pattern[]): string | null {
  const [first, ...rest] = items;
  if (first === undefined) return null;
  // Either the text ends inside the first item (or right after it), or the first item is whole and it ends further on.
  const further = rest.length === 0 ? null : seqPrefix(rest);
  const branches = [further === null ? null : `${patternSource(first)}${further}`, prefixSource(first)].filter((branch) => branch !== null);
  return branches.length === 0 ? null : `(?:${branches.join('|')})`;
}

interface TrieNode {
  children: Map<string, TrieNode>;
}

/**
 * Non-empty prefixes of a list of literals as one trie-shaped regex: a shared
 * prefix ("ignore", "ignored") is tried once, and the regex engine does the
 * matching, so the flags (case folding under `i` / `iu`) are the finder's.
 */
function literalPrefixes(words: readonly string[]): string | null {
  const root: TrieNode = { children: new Map() };
  for (const word of words) {
    let node = root;
    for (const codePoint of word) {
      let next = node.children.get(codePoint);
      if (next === undefined) {
        next = { children: new Map() };
        node.children.set(codePoint, next);
      }
      node = next;
    }
  }
  return root.children.size === 0 ? null : trieSource(root);
}

/** Any non-empty path down from `node`. */
function trieSource(node: TrieNode): string {
  const branches = [...node.children].map(([codePoint, child]) => {
    const below = child.children.size === 0 ? '' : `(?:${trieSource(child)})?`;
    return escapeRegExp(codePoint) + below;
  });
  return branches.length === 1 ? (branches[0] as string) : `(?:${branches.join('|')})`;
}

/**
 * The finder for `pattern`: global, so that `regexMatches` can start it
 * anywhere in a text and its lookbehind still sees the char before.
 */
export function findRegExp(pattern: Pattern, flags = ''): RegExp {
  return new RegExp(patternSource(pattern), `g${flags}`);
}

/**
 * A regex whose leftmost match from `lastIndex` on is the earliest position
 * at which a non-empty prefix of a match of `pattern` runs to the end of the
 * text: where that match could still start. See `earliestOpenStart`.
 */
export function openPrefixRegExp(pattern: Pattern, flags = ''): RegExp {
  return new RegExp(`${prefixSource(pattern) ?? '(?!)'}$`, `g${flags}`);
}

/**
 * Regex matching, from `lastIndex` (sticky), a possibly empty prefix of
 * `pattern` that runs to the end of the text: whether what follows a fixed
 * point (the `@` of an address) could still become a match.
 */
export function stickyPrefixRegExp(pattern: Pattern, flags = ''): RegExp {
  const prefix = prefixSource(pattern);
  return new RegExp(`${prefix === null ? '' : `(?:${prefix})?`}$`, `y${flags}`);
}

/** The earliest offset at or after `from` where `openPrefix` (from openPrefixRegExp) matches, else the text's length. */
export function earliestOpenStart(openPrefix: RegExp, text: string, from: number): number {
  openPrefix.lastIndex = from;
  const match = openPrefix.exec(text);
  return match === null ? text.length : match.index;
}
