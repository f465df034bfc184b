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

export function countTokens(text: string): number {
  return text === '' ? 0 : tokenizer().encode(text).length;
}

/** The longest prefix of `text` of at most `tokens` tokens. */
export function firstTokens(text: string, tokens: number): string {
  if (tokens <= 0) return '';
  const { decode, encode } = tokenizer();
  return decode(encode(text).slice(0, tokens));
}
