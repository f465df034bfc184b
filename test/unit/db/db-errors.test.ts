import { expect } from 'chai';
import { isDatabaseUnavailable } from '../../../src/db/db-errors';
import { AppError, toAppError } from '../../../src/errors';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('database unavailability', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['connection refused', withCode('ECONNREFUSED'), true],
    ['reset', withCode('ECONNRESET'), true],
    ['server shutting down (57P01)', withCode('57P01', 'terminating connection due to administrator command'), true],
    ['cannot connect now (57P03)', withCode('57P03'), true],
    ['connection failure (08006)', withCode('08006'), true],
    ['statement timeout (57014)', withCode('57014'), true],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect'), true],
    ['connection lost mid-query', new Error('Connection terminated unexpectedly'), true],
    ['client-side query timeout', new Error('Query read timeout'), true],
    ['both addresses refused', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]), true],
    ['wrapped by the ORM', Object.assign(new Error('wrapped'), { cause: withCode('ECONNREFUSED') }), true],
    ['protocol violation (a NUL in a parameter) is our bug', withCode('08P01', 'invalid message format'), false],
    ['unique violation', withCode('23505'), false],
    ['invalid text (22021)', withCode('22021'), false],
    ['a plain bug', new TypeError('x is undefined'), false],
    ['not an error', 'ECONNREFUSED', false],
  ];
  for (const [name, error, expected] of cases) {
    it(`${name}: ${expected ? 'unavailable' : 'not unavailable'}`, () => {
      expect(isDatabaseUnavailable(error)).to.equal(expected);
    });
  }

  it('toAppError makes an unreachable database a 503 the caller may retry, anything else an opaque 500', () => {
    const down = toAppError(withCode('ECONNREFUSED'));
    expect(down).to.include({ kind: 'unavailable', code: 'database_unavailable', status: 503 });
    expect(down.headers).to.deep.equal({ 'retry-after': '1' });
    expect(toAppError(withCode('23505'))).to.include({ code: 'internal_error', status: 500 });
    const own = new AppError('conflict', 'name_taken', 'taken');
    expect(toAppError(own)).to.equal(own);
  });
});
