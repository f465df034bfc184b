import { expect } from 'chai';
import { parse } from 'graphql';
import { ANONYMOUS_QUERY_TOKENS, withinTokens } from '../../../src/control-plane/graphql/query-limits';
import { withoutSuggestions } from '../../../src/control-plane/graphql/graphql-errors';

describe('GraphQL query limits', () => {
  const fields = (n: number) => `{${' a'.repeat(n - 2)} }`;

  it('counts tokens as graphql-js does: exactly the limit passes, one more does not, comments are free', () => {
    expect(withinTokens(fields(ANONYMOUS_QUERY_TOKENS), ANONYMOUS_QUERY_TOKENS)).to.equal(true);
    expect(() => parse(fields(ANONYMOUS_QUERY_TOKENS), { maxTokens: ANONYMOUS_QUERY_TOKENS })).not.to.throw();
    expect(withinTokens(fields(ANONYMOUS_QUERY_TOKENS + 1), ANONYMOUS_QUERY_TOKENS)).to.equal(false);
    expect(() => parse(fields(ANONYMOUS_QUERY_TOKENS + 1), { maxTokens: ANONYMOUS_QUERY_TOKENS })).to.throw(/tokens/);
    expect(withinTokens(`# ${'x'.repeat(10_000)}\n{ a }`, 3)).to.equal(true);
  });

  it('leaves a syntax error to the parser, which names it', () => {
    expect(withinTokens('{ "unterminated', 256)).to.equal(true);
  });

  it('strips graphql-js suggestions and nothing else', () => {
    expect(withoutSuggestions('Cannot query field "modls" on type "Query". Did you mean "models"?')).to.equal('Cannot query field "modls" on type "Query".');
    expect(withoutSuggestions('Unknown argument "emial" on field "Mutation.login". Did you mean "email" or "mail"?')).to.equal('Unknown argument "emial" on field "Mutation.login".');
    expect(withoutSuggestions('Cannot query field "x" on type "Query".')).to.equal('Cannot query field "x" on type "Query".');
  });
});
