import { expect } from 'chai';
import { MAX_BODY_DEPTH, nulField, tooDeep } from '../../../src/http/openapi-router';

describe('request guards of the OpenAPI router', () => {
  it('finds U+0000 in any string, key or value, and names where', () => {
    expect(nulField({ name: 'ok', scope: ['a', 'b'] })).to.equal(undefined);
    expect(nulField({ name: 'a\u0000b' })).to.equal('name');
    expect(nulField({ model_scope: ['ok', 'x\u0000'] })).to.equal('model_scope.1');
    expect(nulField({ ['k\u0000']: 1 })).to.equal('k\u0000');
    expect(nulField('\u0000')).to.equal('');
    expect(nulField(null)).to.equal(undefined);
  });

  it('finds nesting past the limit without recursion, however deep', () => {
    const nest = (depth: number) => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as unknown;
    expect(tooDeep({ messages: [{ content: [{ input: { a: { b: 1 } } }] }] })).to.equal(undefined);
    expect(tooDeep(nest(MAX_BODY_DEPTH))).to.equal(undefined);
    expect(tooDeep(nest(MAX_BODY_DEPTH + 1))).to.be.a('string');
    expect(tooDeep({ tools: [{ input_schema: nest(200_000) }] })?.startsWith('tools.0.input_schema.0.0')).to.equal(true);
  });
});
