// How much GraphQL a caller may make the gateway parse (issue 28). graphql-js
// parses the whole document before any rule runs, so a 5 MB query of
// `{a a a …}` held the event loop for seconds before the depth and cost rules
// could refuse it. The body allowance (body-allowance.ts) bounds the bytes;
// these bound the tokens, and parsing stops at the limit.
import { Lexer, Source, TokenKind } from 'graphql';
import { type AppError, appError } from '../../errors';

/**
 * Without a session: the console signs in with a 19-token mutation and sends
 * nothing else; the public fields (`models`, login, logout) fit with room.
 */
export const ANONYMOUS_QUERY_TOKENS = 256;
/** With a session: the console's largest document (the keys page with its fragment) is about 90 tokens; 200 cost-checked aliases about 4,000. */
export const SESSION_QUERY_TOKENS = 5_000;

/** Apollo's parse options for every document: a signed-in caller's limit (Apollo answers past it 400 `graphql_parse_failed`). */
export const PARSE_OPTIONS = { maxTokens: SESSION_QUERY_TOKENS } as const;

/**
 * Whether `query` holds at most `max` tokens, counted as graphql-js's parser
 * counts them (comments are not tokens). Stops reading at `max + 1`. A
 * syntax error counts as within: Apollo's parse reports it in full.
 */
export function withinTokens(query: string, max: number): boolean {
  const lexer = new Lexer(new Source(query));
  try {
    for (let count = 0; count <= max; count += 1) {
      if (lexer.advance().kind === TokenKind.EOF) return true;
    }
  } catch {
    return true;
  }
  return false;
}

export const anonymousQueryTooLarge = (): AppError =>
  appError('queryTooLarge', ANONYMOUS_QUERY_TOKENS);
