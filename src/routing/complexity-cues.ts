// What an ask's text says about the work it asks for: the cue words of
// complexity-lexicon.ts and mathematical notation, found in one pass, with
// figures and questions counted on the way, and the shape of the text
// (complexity-shape.ts: code, lists). Kept apart from
// the features (complexity-features.ts) so the lists can grow without
// touching the arithmetic.
//
// Each group counts *distinct* cue words: an ask that says "compare" forty
// times weighs no more than one that says it once.
import { CUE_GROUPS, LEXICON } from './complexity-lexicon';
import { shapeOf } from './complexity-shape';

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
/**
 * Chinese entries by their first character: HAN_FIRST[char] and NEXT_HAN[entry]
 * hold an entry id + 1 (0: no more), and SECOND[entry] its second character,
 * so most candidates are dismissed by one comparison before any string match.
 */
const HAN_FIRST = new Uint32Array(65536);
const hanNext = new Map<number, number>();

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
    hanNext.set(entry.id, HAN_FIRST[first] ?? 0);
    HAN_FIRST[first] = entry.id + 1;
  }
});

/** TRIE[node * SYMBOLS + symbol]: the child node, 0 for none. */
const SYMBOLS = symbols;
const TRIE = new Uint32Array(next.length * SYMBOLS);
next.forEach((children, node) => children.forEach((child, symbol) => (TRIE[node * SYMBOLS + symbol] = child)));
/**
 * The entries that end at a node, as typed lists the hot loop reads without
 * touching objects: FIRST_END[node] and NEXT_END[entry] hold an entry id + 1
 * (0: no more), with the entry's group and whether it is a stem beside it.
 */
const FIRST_END = new Uint32Array(next.length);
const NEXT_END = new Uint32Array(ENTRIES.length);
const GROUP_OF = Uint8Array.from(ENTRIES, (entry) => entry.group);
const NEXT_HAN = Uint32Array.from(ENTRIES, (entry) => hanNext.get(entry.id) ?? 0);
const SECOND = Uint16Array.from(ENTRIES, (entry) => entry.text.charCodeAt(1) || 0);
const LENGTH = Uint8Array.from(ENTRIES, (entry) => entry.text.length);
const TEXT = ENTRIES.map((entry) => entry.text);
const STEM = Uint8Array.from(ENTRIES, (entry) => (entry.stem ? 1 : 0));
ends.forEach((entries, node) => {
  for (const entry of [...(entries ?? [])].reverse()) {
    NEXT_END[entry.id] = FIRST_END[node] ?? 0;
    FIRST_END[node] = entry.id + 1;
  }
});

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
  const lowered = text.toLowerCase();
  const lower = lowered.includes('’') ? lowered.replaceAll('’', "'") : lowered;
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
            for (let end = FIRST_END[node] ?? 0; end !== 0; end = NEXT_END[end - 1] ?? 0) {
              if (STEM[end - 1] === 1 || !isWordChar(lower.charCodeAt(j))) see(end - 1, GROUP_OF[end - 1] ?? 0);
            }
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
    } else if (HAN_FIRST[code] !== 0) {
      const second = lower.charCodeAt(i + 1);
      for (let entry = HAN_FIRST[code] ?? 0; entry !== 0; entry = NEXT_HAN[entry - 1] ?? 0) {
        const id = entry - 1;
        const length = LENGTH[id] ?? 0;
        if (length === 1 || (SECOND[id] === second && (length === 2 || lower.startsWith(TEXT[id] ?? '', i)))) see(id, GROUP_OF[id] ?? 0);
      }
    } else if (MATH_SYMBOLS.has(code)) {
      see(NOTATION.symbols, MATH);
    }
    previous = code;
  }
  SCAN.numbers = numbers;
  SCAN.questions = questions;
  const shape = shapeOf(text);
  SCAN.code = shape.code;
  SCAN.list = shape.list;
  return SCAN;
}
