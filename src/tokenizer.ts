// The o200k tokenizer (gpt-tokenizer), loaded on first use: its vocabulary
// costs about 60 MB of memory, and a gateway in front of real upstreams needs
// it only for `count_tokens`, the mock provider and interrupted streams.
// Complexity assessment estimates instead (src/routing/complexity.ts).
import { createRequire } from 'node:module';
import type * as GptTokenizerModule from 'gpt-tokenizer';

type GptTokenizer = typeof GptTokenizerModule;

let loaded: GptTokenizer | undefined;

function tokenizer(): GptTokenizer {
  // require() loads synchronously, so callers stay synchronous.
  loaded ??= createRequire(import.meta.url)('gpt-tokenizer') as GptTokenizer;
  return loaded;
}

/** Texts are counted in pieces of about this many characters, so a 20 MB prompt never becomes one 20 MB token array. */
const COUNT_CHUNK_CHARS = 64 * 1024;

/**
 * Tokens of `text`. Long texts are counted piece by piece, cut before a
 * space: the tokenizer's pre-split starts a word at its leading space, so the
 * sum equals the whole count. Text without spaces (Chinese) is cut anywhere,
 * which may move a token or two per 64K characters.
 */
export function countTokens(text: string): number {
  if (text === '') return 0;
  const { encode } = tokenizer();
  if (text.length <= COUNT_CHUNK_CHARS) return encode(text).length;
  let total = 0;
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start);
    total += encode(text.slice(start, end)).length;
    start = end;
  }
  return total;
}

/** Where the piece of `text` from `start` ends: at most COUNT_CHUNK_CHARS on, at a space when there is one, never inside a surrogate pair. */
function pieceEnd(text: string, start: number): number {
  let end = Math.min(text.length, start + COUNT_CHUNK_CHARS);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start + COUNT_CHUNK_CHARS / 2) end = space;
    else if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  }
  return end;
}

/**
 * countTokens for large texts without holding the event loop: the text is
 * encoded 64 K characters at a time with a turn of the event loop between
 * pieces, so a 20 MB count_tokens body delays other requests by one piece's
 * encoding (a few milliseconds), not by the whole count (over a second).
 */
export async function countTokensYielding(text: string): Promise<number> {
  if (text.length <= COUNT_CHUNK_CHARS) return countTokens(text);
  const { encode } = tokenizer();
  let total = 0;
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start);
    total += encode(text.slice(start, end)).length;
    start = end;
    if (start < text.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return total;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** The longest prefix of `text` of at most `tokens` tokens. */
export function firstTokens(text: string, tokens: number): string {
  if (tokens <= 0) return '';
  const { decode, encode } = tokenizer();
  return decode(encode(text).slice(0, tokens));
}
