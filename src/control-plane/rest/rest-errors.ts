import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { AppError, toAppError } from '../../errors';

/** The REST control plane's one error mapping: `{error: {code, message, field?}}`. */
export function installRestErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const appError = fromFastify(error) ?? toAppError(error);
    if (appError.status >= 500) request.log.error({ err: appError.cause ?? appError }, 'control-plane request failed');
    sendRestError(reply, appError);
  });
}

/** The REST envelope `{error: {code, message, field?}}` with the error's status and headers. */
export function sendRestError(reply: FastifyReply, error: AppError): void {
  void reply
    .code(error.status)
    .headers(error.headers)
    .send({ error: { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) } });
}

/** Fastify's own 4xx (unparseable JSON, body too large, wrong content type) keep their status. */
export function fromFastify(error: unknown): AppError | undefined {
  const e = error as FastifyError;
  if (error instanceof AppError || typeof e.statusCode !== 'number' || e.statusCode >= 500) return undefined;
  if (e.statusCode === 413) return new AppError('payload_too_large', 'body_too_large', 'The request body is too large', { field: 'body' });
  if (e.statusCode === 415) return new AppError('invalid_request', 'unsupported_media_type', 'Send the body as application/json', { field: 'body', status: 415 });
  return new AppError('invalid_request', 'malformed_body', `The request body is not valid JSON: ${e.message}`, { field: 'body', status: e.statusCode });
}
