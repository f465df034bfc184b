import { expect } from 'chai';
import pino from 'pino';
import { censorSecrets, loggerOptions } from '../../src/logger';
import { lineSink } from '../support/log-sink';

function capture(): { logger: pino.Logger; lines: () => Array<Record<string, unknown>>; text: () => string } {
  const chunks: string[] = [];
  const logger = pino(loggerOptions('debug'), lineSink(chunks));
  return {
    logger,
    text: () => chunks.join(''),
    lines: () => chunks.join('').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('logger: secrets never reach a log line', () => {
  const secret = 'tsxt-abcdefghijklmnopqrstuvwxyz012345';

  it('censors credentials at the top, one level down, in headers and in req.headers', () => {
    const { logger, lines, text } = capture();
    logger.info({ token: secret, api_key: secret }, 'top');
    logger.info({ body: { apiKey: secret, password: secret, secret, name: 'kept' } }, 'nested');
    logger.info({ headers: { authorization: `Bearer ${secret}`, 'X-Api-Key': secret, accept: 'kept' } }, 'headers');
    logger.info({ req: { method: 'POST', headers: { cookie: `s=${secret}`, 'x-api-key': secret } } }, 'req');
    expect(text()).not.to.include(secret);
    const [top, nested, headers, req] = lines();
    expect(top).to.include({ token: '[redacted]', api_key: '[redacted]' });
    expect(nested!.body).to.deep.equal({ apiKey: '[redacted]', password: '[redacted]', secret: '[redacted]', name: 'kept' });
    expect(headers!.headers).to.deep.equal({ authorization: '[redacted]', 'X-Api-Key': '[redacted]', accept: 'kept' });
    expect((req!.req as { headers: unknown }).headers).to.deep.equal({ cookie: '[redacted]', 'x-api-key': '[redacted]' });
  });

  it('censors a secret carried by a logged error and keeps its message and stack', () => {
    const { logger, lines, text } = capture();
    const error = Object.assign(new Error('login failed'), { token: secret });
    logger.error({ err: error }, 'failed');
    expect(text()).not.to.include(secret);
    const [line] = lines();
    expect(line!.err).to.include({ message: 'login failed', token: '[redacted]', type: 'Error' });
    expect((line!.err as { stack: string }).stack).to.include('login failed');
  });

  it("never changes the caller's object, and hands back the same object when nothing is secret", () => {
    const logged = { body: { token: secret }, status: 200 };
    const censored = censorSecrets(logged);
    expect(logged.body.token).to.equal(secret);
    expect((censored.body as { token: string }).token).to.equal('[redacted]');
    const plain = { method: 'POST', url: '/v1/messages', status: 200, ms: 3 };
    expect(censorSecrets(plain)).to.equal(plain);
  });
});
