// The shape of an ask, measured in one pass: code (fenced blocks and lines
// that end like statements), list items at line starts, and enumerations of
// short items ("reliability, ordering, throughput and latency", "成本、可靠性、
// 运维复杂度"): a brief that names many parts to cover. Part of the complexity
// assessment's cues (complexity-cues.ts).

export interface Shape {
  /** Fenced code and code-shaped lines: 0–4. */
  code: number;
  /** Numbered or bulleted items, enumerations of short items: 0–4. */
  list: number;
}

/** Enumerations: three separators after short items make one. */
const ENUMERATION_SEPARATORS = 3;
const EN_SEPARATOR = 44; // ,
const ZH_SEPARATOR = 0x3001; // 、
const EN_ITEM_CHARS = 40;
const ZH_ITEM_CHARS = 20;
/** Characters that end a clause, and so an enumeration: bit 1 in English, bit 2 in Chinese. */
const STOPS = new Uint8Array(65536);
for (const char of '.;:?!\n') STOPS[char.charCodeAt(0)] = 1;
for (const char of '，。；：？！\n') STOPS[char.charCodeAt(0)] = (STOPS[char.charCodeAt(0)] ?? 0) | 2;
const CHINESE_NUMERALS = new Set([...'一二三四五六七八九十'].map((char) => char.charCodeAt(0)));

const SHAPE: Shape = { code: 0, list: 0 };

/**
 * The shape of `text`; the result is shared, read it before the next call.
 * The two enumeration syntaxes are followed side by side in local variables:
 * this runs on every request, and a state object per syntax costs twice as
 * much as the rest of the pass.
 */
export function shapeOf(text: string): Shape {
  let fences = 0;
  let codeLines = 0;
  let items = 0;
  let last = 0;
  let lineStart = true;
  // Per syntax: enumerations found, separators in the current run, characters in the current item.
  let enFound = 0;
  let enRun = 0;
  let enItem = 0;
  let zhFound = 0;
  let zhRun = 0;
  let zhItem = 0;
  for (let i = 0; i <= text.length; i += 1) {
    const code = i === text.length ? 10 : text.charCodeAt(i);
    if (lineStart) {
      if (listItemAt(text, i)) items += 1;
      lineStart = false;
    }
    if (code === 10) {
      if (isStatementEnd(last)) codeLines += 1;
      last = 0;
      lineStart = true;
    } else if (code > 32) {
      last = code;
      if (code === 96 && text.startsWith('```', i) && text.charCodeAt(i - 1) !== 96) fences += 1;
    }
    const stop = STOPS[code] ?? 0;
    if (code === EN_SEPARATOR && enItem > 0 && enItem <= EN_ITEM_CHARS) {
      enRun += 1;
      enItem = 0;
    } else if (code === EN_SEPARATOR || (stop & 1) !== 0) {
      if (enRun >= ENUMERATION_SEPARATORS) enFound += 1;
      enRun = 0;
      enItem = 0;
    } else {
      enItem += 1;
    }
    if (code === ZH_SEPARATOR && zhItem > 0 && zhItem <= ZH_ITEM_CHARS) {
      zhRun += 1;
      zhItem = 0;
    } else if (code === ZH_SEPARATOR || (stop & 2) !== 0) {
      if (zhRun >= ENUMERATION_SEPARATORS) zhFound += 1;
      zhRun = 0;
      zhItem = 0;
    } else {
      zhItem += 1;
    }
  }
  SHAPE.code = (fences >= 2 ? 2 : 0) + (codeLines >= 3 ? 1 : 0) + (codeLines >= 15 ? 1 : 0);
  SHAPE.list = (items >= 3 ? 1 : 0) + (items >= 5 ? 1 : 0) + Math.min(2, enFound + zhFound);
  return SHAPE;
}

/** Lines that end like statements or blocks (`;` `{` `}` `)`), in the first `limit` characters. */
export function codeLines(text: string, limit: number): number {
  const end = Math.min(text.length, limit);
  let lines = 0;
  let last = 0;
  for (let i = 0; i <= end; i += 1) {
    const code = i === end ? 10 : text.charCodeAt(i);
    if (code === 10) {
      if (isStatementEnd(last)) lines += 1;
      last = 0;
    } else if (code > 32) {
      last = code;
    }
  }
  return lines;
}

/** ; { } ) */
const isStatementEnd = (code: number): boolean => code === 59 || code === 123 || code === 125 || code === 41;

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
