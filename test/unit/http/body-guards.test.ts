import { expect } from 'chai';
import { MAX_BODY_DEPTH, tooDeep } from '../../../src/http/openapi-router';
import { unstorableText } from '../../../src/http/storable-text';

describe('request guards of the OpenAPI router', () => {
  it('finds U+0000 in any string, key or value, and names where', () => {
    const nulAt = (value: unknown) => {
      const found = unstorableText(value);
      return found && found.problem === 'nul' ? found.field : undefined;
    };
    expect(unstorableText({ name: 'ok', scope: ['a', 'b'], emoji: '😀' })).to.equal(undefined);
    expect(nulAt({ name: 'a\u0000b' })).to.equal('name');
    expect(nulAt({ model_scope: ['ok', 'x\u0000'] })).to.equal('model_scope.1');
    expect(nulAt({ ['k\u0000']: 1 })).to.equal('k\u0000');
    expect(nulAt('\u0000')).to.equal('');
    expect(unstorableText(null)).to.equal(undefined);
  });

  it('finds half of a surrogate pair, which jsonb refuses, but passes whole pairs', () => {
    expect(unstorableText({ name: 'a\ud800' })).to.deep.equal({ field: 'name', problem: 'unpaired_surrogate' });
    expect(unstorableText({ tags: ['\udc00x'] })).to.deep.equal({ field: 'tags.0', problem: 'unpaired_surrogate' });
    expect(unstorableText({ name: '\ud83d\ude00 ok' })).to.equal(undefined);
  });

  it('finds nesting past the limit without recursion, however deep', () => {
    const nest = (depth: number) => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as unknown;
    expect(tooDeep({ messages: [{ content: [{ input: { a: { b: 1 } } }] }] })).to.equal(undefined);
    expect(tooDeep(nest(MAX_BODY_DEPTH))).to.equal(undefined);
    expect(tooDeep(nest(MAX_BODY_DEPTH + 1))).to.be.a('string');
    expect(tooDeep({ tools: [{ input_schema: nest(200_000) }] })?.startsWith('tools.0.input_schema.0.0')).to.equal(true);
  });
});
