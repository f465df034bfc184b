import { expect } from 'chai';
import { type AppError, ERRORS, appError, reportedError, toAppError, type ErrorName } from '../../../src/errors';

describe('errors: the catalogue, toAppError and the server-error log', () => {
  it('declares every code in snake_case, and each entry raises its own code, kind and message', () => {
    for (const [name, entry] of Object.entries(ERRORS)) {
      expect(entry.code, name).to.match(/^[a-z]+(_[a-z]+)*$/);
      if (typeof entry.message !== 'string') continue;
      const error = (appError as (name: ErrorName) => AppError)(name as ErrorName);
      expect({ code: error.code, kind: error.kind, message: error.message }, name).to.deep.equal({ code: entry.code, kind: entry.kind, message: entry.message });
    }
  });

  it('builds a message from its parameters, with the status, field and headers the entry declares', () => {
    const error = appError('tooManyTokenCounts', 2);
    expect(error).to.include({ code: 'too_many_requests', status: 429, message: 'At most 2 token counts per API key run at once; retry when one has finished' });
    expect(error.headers).to.deep.equal({ 'retry-after': '1' });
    expect(appError('clientClosed').status).to.equal(499);
    expect(appError('modelNotFound', 'nope').field).to.equal('model');
  });

  it('lets one error add headers, override the field and keep its cause, without changing the entry', () => {
    const cause = new Error('boom');
    const error = appError('upstreamOverloaded', { headers: { 'retry-after': '7' }, cause });
    expect(error).to.include({ status: 529, cause });
    expect(error.headers).to.deep.equal({ 'retry-after': '7' });
    expect(appError('itemNotFound', 'x', { field: 'input[2].id' }).field).to.equal('input[2].id');
    expect(appError('itemNotFound', 'x').field).to.equal('item_id');
    const withHeaders = appError('accountOverCreditLimit');
    withHeaders.headers['x-extra'] = '1';
    expect(appError('accountOverCreditLimit').headers).to.deep.equal({ 'x-should-retry': 'false' });
  });

  it('maps Fastify 4xx to their status, an unreachable database to a 503, anything else to an opaque 500', () => {
    const fastify = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });
    expect(toAppError(fastify(413, 'too big'))).to.include({ code: 'body_too_large', status: 413, field: 'body' });
    expect(toAppError(fastify(415, 'no'))).to.include({ code: 'unsupported_media_type', status: 415 });
    expect(toAppError(fastify(400, 'Unexpected token'))).to.include({ code: 'malformed_body', status: 400, message: 'The request body is not valid JSON: Unexpected token' });
    expect(toAppError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).to.include({ code: 'database_unavailable', status: 503 });
    const opaque = toAppError(new Error('select * from secrets'));
    expect(opaque).to.include({ code: 'internal_error', status: 500, message: 'Internal server error' });
    const known = appError('keyExpired');
    expect(toAppError(known)).to.equal(known);
  });

  it('logs a 5xx once with its cause and the request id, and never a 4xx', () => {
    const lines: Array<[object, string]> = [];
    const log = { error: (bindings: object, message: string) => lines.push([bindings, message]) };
    const cause = new Error('disk on fire');
    expect(reportedError(cause, log, 'data-plane request failed', 'req_1')).to.include({ status: 500 });
    expect(reportedError(appError('missingApiKey'), log, 'data-plane request failed', 'req_2')).to.include({ status: 401 });
    expect(lines).to.deep.equal([[{ err: cause, request_id: 'req_1' }, 'data-plane request failed']]);
  });
});
