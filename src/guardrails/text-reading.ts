// Detectors read what a reader sees, not the code units that were sent. An
// address with a zero-width space inside, a full-width ＠, Arabic-Indic
// digits, `%40` or `&#64;` looks like (or decodes to) the plain one, so
// detection runs on a view of the text in which:
// - invisible characters are gone: zero-width ones (U+200B–U+200D, U+2060,
//   U+FEFF), the soft hyphen, bidi controls, invisible operators, the
//   Mongolian vowel separator, the combining grapheme joiner, variation
//   selectors;
// - a compatibility character reads as its NFKC form where that form holds
//   something a pattern can use (ASCII letters, digits, `@ . _ + % & # ' -`,
//   or a space): full-width ＡＢ１２＠, ①, 𝟏, ﬁ, the no-break space. Other NFKC
//   changes (the full-width comma of Chinese prose) concern no detector and
//   are left alone, which keeps such text off the slow path;
// - a decimal digit of any script reads as its ASCII digit, and the hyphen
//   and dash look-alikes (U+2010–U+2013, U+2212) as "-";
// - a percent escape of printable ASCII (`%40`) and an HTML character
//   reference (`&#64;`, `&#x40;`, `&commat;`) read as the character they
//   stand for (once: `&amp;#64;` is "&#64;").
// Detectors of Latin-only tokens (addresses, keys) read a second view,
// `letters`, where Cyrillic and Greek letters that look like Latin ones read
// as those, unless they continue a Russian or Greek word (text-view.ts);
// elsewhere (the block list) that would make Russian words read as Latin
// ones.
//
// This file holds those rules: what a raw char or escape reads as. The view
// built from them, with the raw span behind each of its chars, is
// text-view.ts.

/**
 * A char that may read as something else: anything but ASCII without "%"
 * and "&", CJK ideographs, kana, Hangul, and the punctuation of Chinese prose
 * that reads as itself (，：；！？（）“”‘’—…).
 */
const NOT_ITSELF = /[^\x00-\x24\x27-\x7f\u2014\u2018\u2019\u201c\u201d\u2026\u3001-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f]/;

/** True when `text` reads as it is (both views): the detectors may scan it directly. */
export function readsAsItself(text: string): boolean {
  return !NOT_ITSELF.test(text);
}

const NOT_ITSELF_ANYWHERE = new RegExp(NOT_ITSELF.source, 'g');

/**
 * The next char at or after `from` that may read as something else, or -1:
 * the regex engine skips the runs that read as themselves far faster than a
 * loop over char codes, and `test` allocates nothing.
 */
export function nextSpecial(text: string, from: number): number {
  NOT_ITSELF_ANYWHERE.lastIndex = from;
  return NOT_ITSELF_ANYWHERE.test(text) ? NOT_ITSELF_ANYWHERE.lastIndex - 1 : -1;
}

const PERCENT = 0x25;
const AMPERSAND = 0x26;
const HASH = 0x23;
const SEMICOLON = 0x3b;
/** `&#1114111;` has seven digits, `&#x10FFFF;` six. */
const MAX_DECIMAL_DIGITS = 7;
const MAX_HEX_DIGITS = 6;

/** Named references a reader sees as a character a pattern uses. */
const NAMED = new Map<string, string>([
  ['commat', '@'],
  ['period', '.'],
  ['lowbar', '_'],
  ['hyphen', '-'],
  ['dash', '-'],
  ['plus', '+'],
  ['percnt', '%'],
  ['num', '#'],
  ['amp', '&'],
  ['nbsp', ' '],
]);
const MAX_NAME = 6;

/** Code points that are never anything but themselves to a detector: CJK ideographs, kana, Hangul. */
function isPlainLetter(cp: number): boolean {
  return (cp >= 0x3001 && cp <= 0x31ff) || (cp >= 0x3400 && cp <= 0x9fff) || (cp >= 0xac00 && cp <= 0xd7a3);
}

function isInvisible(cp: number): boolean {
  return (
    cp === 0xad ||
    cp === 0x34f ||
    cp === 0x180e ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x2064) ||
    (cp >= 0x2066 && cp <= 0x2069) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    cp === 0xfeff
  );
}

/** U+2011 (non-breaking hyphen) has no ASCII NFKC form; the others none at all. */
function isDash(cp: number): boolean {
  return (cp >= 0x2010 && cp <= 0x2013) || cp === 0x2212;
}

/** An NFKC form worth reading: it holds a char some pattern uses, or is a plain space. */
const USEFUL_FORM = /[A-Za-z0-9@._+%&#'-]|^ $/;
const DECIMAL_DIGIT = /\p{Nd}/u;

/** The ASCII digit a decimal digit of another script stands for (digits come in runs of ten, 0 to 9, some runs adjacent). */
function digitOf(cp: number): string {
  let zero = cp;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  return String((cp - zero) % 10);
}

/** What a non-ASCII code point reads as: '' (invisible), its replacement, or null (itself). */
function computeReading(cp: number): string | null {
  if (isInvisible(cp)) return '';
  if (isDash(cp)) return '-';
  // An ellipsis is no dot a reader would take for part of an address (and Chinese prose is full of them).
  if (cp === 0x2025 || cp === 0x2026) return null;
  const char = String.fromCodePoint(cp);
  const compatible = char.normalize('NFKC');
  if (compatible !== char && USEFUL_FORM.test(compatible)) return compatible;
  if (DECIMAL_DIGIT.test(char)) return digitOf(cp);
  return null;
}

// Readings are computed once per code point seen (NFKC and a property test
// are too slow to repeat for every character of every text); the astral
// cache is capped, past which they are recomputed.
const BMP_READINGS: Array<string | null | undefined> = new Array<string | null | undefined>(0x10000).fill(undefined);
const ASTRAL_READINGS = new Map<number, string | null>();
const ASTRAL_CACHE_LIMIT = 4096;

function readingOf(cp: number): string | null {
  if (isPlainLetter(cp)) return null;
  if (cp < 0x10000) {
    const cached = BMP_READINGS[cp];
    if (cached !== undefined) return cached;
    const reading = computeReading(cp);
    BMP_READINGS[cp] = reading;
    return reading;
  }
  const cached = ASTRAL_READINGS.get(cp);
  if (cached !== undefined) return cached;
  const reading = computeReading(cp);
  if (ASTRAL_READINGS.size < ASTRAL_CACHE_LIMIT) ASTRAL_READINGS.set(cp, reading);
  return reading;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function decimalValue(code: number): number {
  return code >= 0x30 && code <= 0x39 ? code - 0x30 : -1;
}

function isAsciiLetter(code: number): boolean {
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x7a;
}

/** What readAt found: what the raw sequence it read stands for, or null for itself. */
export interface Reading {
  text: string | null;
}

/**
 * Reads the raw sequence at `i` (a char, a surrogate pair, an escape) and
 * returns its length, with `out.text` set; 0 when more text could still
 * change what it is (never when `final`). A text read whole and the same text
 * read in pieces give the same sequences.
 */
export function readAt(raw: string, i: number, final: boolean, out: Reading): number {
  const code = raw.charCodeAt(i);
  out.text = null;
  if (code < 0x80) {
    if (code === PERCENT) return readPercent(raw, i, final, out);
    if (code === AMPERSAND) return readReference(raw, i, final, out);
    return 1;
  }
  if (code >= 0xd800 && code <= 0xdbff) {
    if (i + 1 >= raw.length) return final ? 1 : 0;
    const low = raw.charCodeAt(i + 1);
    if (low < 0xdc00 || low > 0xdfff) return 1;
    out.text = readingOf((code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000);
    return 2;
  }
  out.text = readingOf(code);
  return 1;
}

/** `%XX` of printable ASCII. */
function readPercent(raw: string, i: number, final: boolean, out: Reading): number {
  if (i + 1 >= raw.length) return final ? 1 : 0;
  const high = hexValue(raw.charCodeAt(i + 1));
  if (high < 0) return 1;
  if (i + 2 >= raw.length) return final ? 1 : 0;
  const low = hexValue(raw.charCodeAt(i + 2));
  const byte = high * 16 + low;
  if (low < 0 || byte < 0x20 || byte > 0x7e) return 1;
  out.text = String.fromCharCode(byte);
  return 3;
}

/** `&#DDD;`, `&#xHH;` (the semicolon optional, as browsers read them) and a few named references. */
function readReference(raw: string, i: number, final: boolean, out: Reading): number {
  const n = raw.length;
  let j = i + 1;
  if (j >= n) return final ? 1 : 0;
  if (raw.charCodeAt(j) !== HASH) return readNamed(raw, i, final, out);
  j++;
  if (j >= n) return final ? 1 : 0;
  const hex = (raw.charCodeAt(j) | 0x20) === 0x78;
  if (hex) j++;
  const digitValue = hex ? hexValue : decimalValue;
  const max = hex ? MAX_HEX_DIGITS : MAX_DECIMAL_DIGITS;
  const digits = j;
  let value = 0;
  while (j < n && j - digits < max) {
    const digit = digitValue(raw.charCodeAt(j));
    if (digit < 0) break;
    value = value * (hex ? 16 : 10) + digit;
    j++;
  }
  // Whatever follows the digits (more digits, ";", other text) decides.
  if (j >= n) {
    if (!final) return 0;
  } else if (digitValue(raw.charCodeAt(j)) >= 0) return 1;
  if (j === digits) return 1;
  if (value === 0 || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 1;
  const length = j < n && raw.charCodeAt(j) === SEMICOLON ? j + 1 - i : j - i;
  out.text = value < 0x80 ? String.fromCharCode(value) : (readingOf(value) ?? String.fromCodePoint(value));
  return length;
}

function readNamed(raw: string, i: number, final: boolean, out: Reading): number {
  const n = raw.length;
  let j = i + 1;
  while (j < n && j - i - 1 < MAX_NAME && isAsciiLetter(raw.charCodeAt(j))) j++;
  if (j === i + 1) return 1;
  if (j >= n) return final ? 1 : 0;
  if (raw.charCodeAt(j) !== SEMICOLON) return 1;
  const named = NAMED.get(raw.slice(i + 1, j));
  if (named === undefined) return 1;
  out.text = named;
  return j + 1 - i;
}

/** Cyrillic and Greek letters (and a few Latin ones) that look like a Latin letter, for the `letters` view. */
export const LOOKALIKES: ReadonlyMap<number, string> = new Map<number, string>(
  Object.entries({
    А: 'A', а: 'a', В: 'B', в: 'b', Е: 'E', е: 'e', К: 'K', к: 'k', М: 'M', м: 'm', Н: 'H', н: 'h', О: 'O', о: 'o',
    Р: 'P', р: 'p', С: 'C', с: 'c', Т: 'T', т: 't', У: 'Y', у: 'y', Х: 'X', х: 'x', Ѕ: 'S', ѕ: 's', І: 'I', і: 'i',
    Ј: 'J', ј: 'j', Һ: 'H', һ: 'h', Ԁ: 'D', ԁ: 'd', Ԛ: 'Q', ԛ: 'q', Ԝ: 'W', ԝ: 'w', Ү: 'Y', ү: 'y', Ӏ: 'I', ӏ: 'l',
    Α: 'A', α: 'a', Β: 'B', Ε: 'E', Ζ: 'Z', Η: 'H', Ι: 'I', ι: 'i', Κ: 'K', κ: 'k', Μ: 'M', Ν: 'N', ν: 'v', Ο: 'O',
    ο: 'o', Ρ: 'P', ρ: 'p', Τ: 'T', Υ: 'Y', υ: 'u', Χ: 'X', χ: 'x', ϲ: 'c', ϳ: 'j', ı: 'i', ɡ: 'g',
  }).map(([from, to]) => [from.charCodeAt(0), to]),
);

/** Where the `letters` view may differ: Cyrillic, Greek, and the Latin letters between them that the table maps. */
export function isLookalikeScript(code: number): boolean {
  return code >= 0x131 && code <= 0x52f;
}

/** A Cyrillic or Greek letter that looks like no Latin one: the text around it is Russian, Greek…, not a disguised address. */
export function isOwnScriptLetter(code: number): boolean {
  return code >= 0x370 && code <= 0x52f && !LOOKALIKES.has(code);
}

export const LOOKALIKE_SCRIPT = /[\u0131-\u052f]/;

