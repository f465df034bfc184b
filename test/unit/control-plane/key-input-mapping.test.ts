// Each transport's way from its wire form to the key service's typed input:
// the REST body (snake_case JSON, unknown fields refused naming them) and the
// GraphQL input (already typed; null for a field that cannot be cleared is
// refused naming it). Value rules are the service's and are not tested here.
import 'reflect-metadata';
import { expect } from 'chai';
import { toCreateKeyInput, toUpdateKeyInput } from '../../../src/control-plane/graphql/keys/api-key.mapper';
import { createKeyInput, updateKeyInput } from '../../../src/control-plane/rest/key.mapper';
import { AppError } from '../../../src/errors';

function refused(map: () => unknown): AppError {
  try {
    map();
  } catch (error) {
    expect(error).to.be.instanceOf(AppError);
    return error as AppError;
  }
  throw new Error('mapped without a refusal');
}

describe('key inputs from the wire', () => {
  describe('REST bodies', () => {
    it('map snake_case fields to the typed input, keeping absent fields absent', () => {
      expect(createKeyInput({ name: 'n', dimension: '部门', model_scope: ['m'] })).to.deep.equal({ name: 'n', dimension: '部门', modelScope: ['m'] });
      expect(
        createKeyInput({ name: 'n', dimension: '部门', model_scope: ['m'], expires_at: null, rate_limit: { requests_per_minute: 5 } }),
      ).to.deep.equal({
        name: 'n',
        dimension: '部门',
        modelScope: ['m'],
        expiresAt: null,
        rateLimit: { requests_per_minute: 5, tokens_per_minute: null, concurrent_requests: null },
      });
      expect(updateKeyInput({ expires_at: null, rate_limit: null })).to.deep.equal({ expiresAt: null, rateLimit: null });
      expect(updateKeyInput({})).to.deep.equal({});
    });

    const refusedBodies: Array<[string, () => unknown, string]> = [
      ['a body that is an array', () => createKeyInput([]), 'body'],
      ['an unknown field', () => updateKeyInput({ name: 'x', quota: 1 }), 'quota'],
      ['name missing', () => createKeyInput({ dimension: '部门', model_scope: ['m'] }), 'name'],
      ['name a number', () => createKeyInput({ name: 42, dimension: '部门', model_scope: ['m'] }), 'name'],
      ['dimension null', () => updateKeyInput({ dimension: null }), 'dimension'],
      ['model_scope a string', () => updateKeyInput({ model_scope: 'm' }), 'model_scope'],
      ['a model_scope item not a string', () => updateKeyInput({ model_scope: ['m', 3] }), 'model_scope[1]'],
      ['expires_at a number', () => updateKeyInput({ expires_at: 20991231 }), 'expires_at'],
      ['a rate_limit budget a string', () => updateKeyInput({ rate_limit: { requests_per_minute: '5' } }), 'rate_limit.requests_per_minute'],
    ];
    for (const [title, map, field] of refusedBodies) {
      it(`${title} → 400 naming ${field}`, () => expect(refused(map)).to.include({ status: 400, field }));
    }
  });

  describe('GraphQL inputs', () => {
    it('map straight to the typed input, budgets absent or null read as unlimited', () => {
      expect(toCreateKeyInput({ name: 'n', dimension: '部门', modelScope: ['m'], rateLimit: { requestsPerMinute: 60 } })).to.deep.equal({
        name: 'n',
        dimension: '部门',
        modelScope: ['m'],
        rateLimit: { requests_per_minute: 60, tokens_per_minute: null, concurrent_requests: null },
      });
      expect(toUpdateKeyInput({ expiresAt: null, rateLimit: null })).to.deep.equal({ expiresAt: null, rateLimit: null });
    });

    for (const [field, input] of [
      ['name', { name: null }],
      ['dimension', { dimension: null }],
      ['model_scope', { modelScope: null }],
    ] as const) {
      it(`null for ${field} → 400 naming it`, () => expect(refused(() => toUpdateKeyInput(input))).to.include({ status: 400, field }));
    }
  });
});
