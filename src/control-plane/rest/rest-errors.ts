import type { FastifyInstance, FastifyReply } from 'fastify';
import { reportedError, type AppError } from '../../errors';

/** The REST control plane's one error mapping: `{error: {code, message, field?}}`. */
export function installRestErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => sendRestError(reply, reportedError(error, request.log, 'control-plane request failed')));
}

/** The REST envelope `{error: {code, message, field?}}` with the error's status and headers. */
export function sendRestError(reply: FastifyReply, error: AppError): void {
  void reply
    .code(error.status)
    .headers(error.headers)
    .send({ error: { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) } });
}
