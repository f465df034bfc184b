// Prompt tokens estimated from character classes, for the complexity
// assessment (complexity-features.ts): cheaper than a tokenizer on every
// request, and accurate enough for features that are logarithmic in length.

/** Only this many characters are counted; the rest is extrapolated at the same tokens-per-character rate. */
const ESTIMATE_CAP_CHARS = 4000;

/**
 * Prompt tokens estimated from character classes instead of a tokenizer: the
 * o200k vocabulary costs memory and time on every request, and the length
 * score is logarithmic, so an estimate off by a third moves it by a few
 * hundredths. Against o200k on the routing evaluation set the estimate is
 * close for most prompts (README, Benchmarks): a Latin word is about one token per 7 letters,
 * a digit run one per 3 digits, a CJK character 0.7, other symbols one each.
 */
export function estimateTokens(text: string, cap: number = ESTIMATE_CAP_CHARS): number {
  const end = Math.min(text.length, cap);
  let tokens = 0;
  // One pass over character codes, no match objects: it runs on every request.
  // Runs: Latin words, digit runs, single CJK characters, whitespace runs, any other single character.
  for (let i = 0; i < end; ) {
    const code = text.charCodeAt(i);
    let run = 1;
    if (isLatinLetter(code)) {
      while (i + run < end && isLatinLetter(text.charCodeAt(i + run))) run += 1;
      tokens += Math.ceil(run / 7);
    } else if (isDigit(code)) {
      while (i + run < end && isDigit(text.charCodeAt(i + run))) run += 1;
      tokens += Math.ceil(run / 3);
    } else if (isCjk(code)) {
      tokens += 0.7;
    } else {
      if (isSpace(code)) while (i + run < end && isSpace(text.charCodeAt(i + run))) run += 1;
      // A run is weighed by its first character: ASCII blanks are free unless several, other symbols about one token each.
      if (code <= 32) tokens += run > 1 ? 1 : 0;
      else if (code >= 0x3040) tokens += 0.7;
      else tokens += 1;
    }
    i += run;
  }
  return Math.round(end === text.length ? tokens : (tokens * text.length) / end);
}

const isLatinLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
const isDigit = (code: number): boolean => code >= 48 && code <= 57;
const isCjk = (code: number): boolean =>
  (code >= 0x3040 && code <= 0x30ff) || (code >= 0x3400 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) || (code >= 0xf900 && code <= 0xfaff);
/** What `\s` matches. */
const isSpace = (code: number): boolean =>
  code === 32 ||
  (code >= 9 && code <= 13) ||
  code === 0xa0 ||
  code === 0x1680 ||
  (code >= 0x2000 && code <= 0x200a) ||
  code === 0x2028 ||
  code === 0x2029 ||
  code === 0x202f ||
  code === 0x205f ||
  code === 0x3000 ||
  code === 0xfeff;
