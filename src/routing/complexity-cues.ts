// What an ask's text says about the work it asks for: the cue words of
// complexity-lexicon.ts, found in one pass, and the shape of the text
// (mathematical notation, code, lists, figures, questions). Kept apart from
// the features (complexity-features.ts) so the lists can grow without
// touching the arithmetic.
//
// Each group counts *distinct* cue words: an ask that says "compare" forty
// times weighs no more than one that says it once.
import { CUE_GROUPS, LEXICON } from './complexity-lexicon';

export interface CueScan {
  /** Distinct cue words found per group, in CUE_GROUPS order (math includes notation). */
  readonly groups: Int32Array;
  /** Fenced code and code-shaped lines: 0–4. */
  code: number;
  /** Numbered or bulleted items, enumerations of short items: 0–4. */
  list: number;
  /** Runs of digits (figures, data given with the problem). */
  numbers: number;
  questions: number;
}

interface Entry {
  readonly text: string;
  readonly group: number;
  /** English stem (`analy*`): no word boundary needed after it. */
  readonly stem: boolean;
  /** Index for the distinct-word stamps. */
  readonly id: number;
}

const ENTRIES: Entry[] = [];
/** Chinese entries by their first character, and a bitmap of those characters for a cheap test. */
const BY_HAN = new Map<number, Entry[]>();
const HAN_FIRST = new Uint8Array(65536);

/**
 * English entries as a trie over the characters they use, walked from each
 * word start: a step is one table read, and the walk stops at the first
 * character no entry continues with, usually within three.
 */
const ALPHABET = new Uint8Array(128);
let symbols = 1;
const next: number[][] = [[]];
const ends: Array<Entry[] | undefined> = [undefined];

function addEnglish(text: string, entry: Entry): void {
  let node = 0;
  for (const char of text) {
    const code = char.charCodeAt(0);
    if (code >= 128) throw new Error(`cue ${text}: English cues are ASCII`);
    if (ALPHABET[code] === 0) ALPHABET[code] = symbols++;
    const symbol = ALPHABET[code] ?? 0;
    const children = next[node] ?? [];
    let child = children[symbol];
    if (child === undefined) {
      child = next.length;
      children[symbol] = child;
      next[node] = children;
      next.push([]);
      ends.push(undefined);
    }
    node = child;
  }
  (ends[node] ??= []).push(entry);
}

CUE_GROUPS.forEach((name, group) => {
  for (const word of LEXICON[name].en.split('|')) {
    const stem = word.endsWith('*');
    const text = stem ? word.slice(0, -1) : word;
    if (!isWordChar(text.charCodeAt(0))) throw new Error(`cue ${word}: an English cue starts with a letter or digit`);
    const entry = { text, group, stem, id: ENTRIES.length };
    ENTRIES.push(entry);
    addEnglish(text, entry);
  }
  for (const text of LEXICON[name].zh.split('|')) {
    const first = text.charCodeAt(0);
    const entry = { text, group, stem: true, id: ENTRIES.length };
    ENTRIES.push(entry);
    BY_HAN.set(first, [...(BY_HAN.get(first) ?? []), entry]);
    HAN_FIRST[first] = 1;
  }
});

/** TRIE[node * SYMBOLS + symbol]: the child node, 0 for none. */
const SYMBOLS = symbols;
const TRIE = new Uint32Array(next.length * SYMBOLS);
next.forEach((children, node) => children.forEach((child, symbol) => (TRIE[node * SYMBOLS + symbol] = child)));
const ENDS: ReadonlyArray<readonly Entry[] | undefined> = ends;

const MATH = CUE_GROUPS.indexOf('math');
const CODE = CUE_GROUPS.indexOf('code');
/** Pseudo-entries for notation, so each kind counts once like a word. */
const NOTATION = { latex: ENTRIES.length, dollars: ENTRIES.length + 1, symbols: ENTRIES.length + 2, power: ENTRIES.length + 3, fence: ENTRIES.length + 4 };
const STAMP_SIZE = ENTRIES.length + 5;

/** Mathematical symbols that rarely appear outside mathematics. */
const MATH_SYMBOLS = new Set([...'∫∑∏√≤≥≠≈∞ℝℕℤℚ∀∃∈∉⊂⊆∪∩²³⁴ⁿ±×÷∂∇≡'].map((char) => char.charCodeAt(0)));
const LATEX = ['frac', 'int', 'sum', 'prod', 'sqrt', 'lim', 'ge', 'le', 'geq', 'leq', 'infty', 'cdot', 'alpha', 'beta', 'mathbb', 'binom', 'pmod', 'ln', 'log', 'sin', 'cos'];

/**
 * Which entries were seen in the current scan: an entry counts when its stamp
 * is not the scan's number. Reused from call to call (no allocation, no
 * clearing); a scan is valid until the next.
 */
const STAMPS = new Uint32Array(STAMP_SIZE);
let scanNumber = 0;
const SCAN: CueScan = { groups: new Int32Array(CUE_GROUPS.length), code: 0, list: 0, numbers: 0, questions: 0 };

function isWordChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90);
}

function see(id: number, group: number): void {
  if (STAMPS[id] === scanNumber) return;
  STAMPS[id] = scanNumber;
  SCAN.groups[group] = (SCAN.groups[group] ?? 0) + 1;
}

/** Scans `text` (an ask, already cut to a bounded window). The result is shared: read it before the next call. */
export function scanCues(text: string): CueScan {
  scanNumber = (scanNumber + 1) >>> 0 || 1;
  SCAN.groups.fill(0);
  // Lower case, curly apostrophes as straight ones: the lexicon is written so.
  const lower = text.toLowerCase().replaceAll('’', "'");
  const n = lower.length;
  let previous = 32;
  let numbers = 0;
  let questions = 0;
  for (let i = 0; i < n; i += 1) {
    const code = lower.charCodeAt(i);
    if (code < 128) {
      if (isWordChar(code)) {
        if (!isWordChar(previous)) {
          if (code <= 57) numbers += 1;
          let node = 0;
          for (let j = i; j < n; ) {
            const c = lower.charCodeAt(j);
            node = c < 128 ? (TRIE[node * SYMBOLS + (ALPHABET[c] ?? 0)] ?? 0) : 0;
            if (node === 0) break;
            j += 1;
            const found = ENDS[node];
            if (found !== undefined) for (const entry of found) if (entry.stem || !isWordChar(lower.charCodeAt(j))) see(entry.id, entry.group);
          }
        }
      } else if (code === 63) {
        questions += 1;
      } else if (code === 92) {
        if (LATEX.some((command) => lower.startsWith(command, i + 1))) see(NOTATION.latex, MATH);
      } else if (code === 36) {
        const close = lower.indexOf('$', i + 1);
        if (close > i + 1 && close - i < 200 && !lower.slice(i + 1, close).includes('\n')) see(NOTATION.dollars, MATH);
      } else if (code === 94) {
        if (isWordChar(previous) || previous === 41) see(NOTATION.power, MATH);
      } else if (code === 96) {
        if (lower.startsWith('```', i)) see(NOTATION.fence, CODE);
      }
    } else if (code === 0xff1f) {
      questions += 1;
    } else if (HAN_FIRST[code] === 1) {
      for (const entry of BY_HAN.get(code) ?? []) if (lower.startsWith(entry.text, i)) see(entry.id, entry.group);
    } else if (MATH_SYMBOLS.has(code)) {
      see(NOTATION.symbols, MATH);
    }
    previous = code;
  }
  SCAN.numbers = numbers;
  SCAN.questions = questions;
  SCAN.code = codeShape(text);
  SCAN.list = listShape(text);
  return SCAN;
}

/** Lines that end like statements or blocks (`;` `{` `}` `)`), in the first `limit` characters. */
export function codeLines(text: string, limit: number): number {
  const end = Math.min(text.length, limit);
  let lines = 0;
  let last = 0;
  for (let i = 0; i <= end; i += 1) {
    const code = i === end ? 10 : text.charCodeAt(i);
    if (code === 10) {
      if (last === 59 || last === 123 || last === 125 || last === 41) lines += 1;
      last = 0;
    } else if (code > 32) {
      last = code;
    }
  }
  return lines;
}

/** Pasted code in the ask: a fenced block counts two, many code-shaped lines more. */
function codeShape(text: string): number {
  const fenced = text.indexOf('```') >= 0 && text.indexOf('```', text.indexOf('```') + 3) >= 0;
  const lines = codeLines(text, text.length);
  return (fenced ? 2 : 0) + (lines >= 3 ? 1 : 0) + (lines >= 15 ? 1 : 0);
}

/** Whether a line starts like a list item: `1.` `2)` `-` `*` `•` `一、`. */
function listItemAt(text: string, start: number): boolean {
  let i = start;
  while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i += 1;
  const code = text.charCodeAt(i);
  if (code === 45 || code === 42 || code === 0x2022) return text.charCodeAt(i + 1) === 32;
  if (code >= 48 && code <= 57) {
    let j = i + 1;
    if (text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j += 1;
    const mark = text.charCodeAt(j);
    return mark === 46 || mark === 41 || mark === 0x3001 || mark === 0xff09;
  }
  return CHINESE_NUMERALS.has(code) && text.charCodeAt(i + 1) === 0x3001;
}
const CHINESE_NUMERALS = new Set([...'一二三四五六七八九十'].map((char) => char.charCodeAt(0)));

/** Numbered requirements or long enumerations are a brief with many parts. */
function listShape(text: string): number {
  let items = 0;
  for (let start = 0; start < text.length; ) {
    if (listItemAt(text, start)) items += 1;
    const end = text.indexOf('\n', start);
    if (end < 0) break;
    start = end + 1;
  }
  const enumerations = countEnumerations(text, EN_LIST) + countEnumerations(text, ZH_LIST);
  return (items >= 3 ? 1 : 0) + (items >= 5 ? 1 : 0) + Math.min(2, enumerations);
}

interface ListSyntax {
  separator: number;
  /** Characters that end a sentence or clause, and so a list: a lookup table by char code. */
  stops: Uint8Array;
  maxItemChars: number;
}
function stopTable(chars: string): Uint8Array {
  const table = new Uint8Array(65536);
  for (const char of chars) table[char.charCodeAt(0)] = 1;
  return table;
}
const EN_LIST: ListSyntax = { separator: ','.charCodeAt(0), stops: stopTable('.;:?!\n'), maxItemChars: 40 };
const ZH_LIST: ListSyntax = { separator: '、'.charCodeAt(0), stops: stopTable('，。；：？！\n'), maxItemChars: 20 };
/** "reliability, ordering, throughput and latency": three separators after short items. */
const ENUMERATION_SEPARATORS = 3;

/**
 * Counts runs of short items joined by a separator: a brief that names many
 * facets to cover. A single linear pass (the equivalent regular expression
 * backtracks), and none at all when the separator does not occur three times.
 */
function countEnumerations(text: string, syntax: ListSyntax): number {
  const separator = String.fromCharCode(syntax.separator);
  let at = text.indexOf(separator);
  for (let seen = 0; seen < ENUMERATION_SEPARATORS - 1 && at >= 0; seen += 1) at = text.indexOf(separator, at + 1);
  if (at < 0) return 0;
  let found = 0;
  let run = 0;
  let itemChars = 0;
  for (let i = 0; i <= text.length; i += 1) {
    const code = i === text.length ? 10 : text.charCodeAt(i);
    if (code === syntax.separator) {
      if (itemChars > 0 && itemChars <= syntax.maxItemChars) {
        run += 1;
        itemChars = 0;
        continue;
      }
    }
    if (code === syntax.separator || syntax.stops[code] === 1) {
      if (run >= ENUMERATION_SEPARATORS) found += 1;
      run = 0;
      itemChars = 0;
    } else {
      itemChars += 1;
    }
  }
  return found;
}
