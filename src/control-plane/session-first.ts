// Both control-plane transports look the console session up from the
// Authorization header in their onRequest hook, before a byte of the body is
// read: the body's allowance depends on it (body-allowance.ts), so a caller
// without a session cannot make the gateway buffer or parse megabytes
// (issue 28: one large anonymous GraphQL query held the event loop for
// seconds).
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../domain/actor';
import type { SessionService } from '../domain/auth/session.service';
import { AppError } from '../errors';
import { PRE_AUTH_BODY, SESSION_BODY } from '../http/body-allowance';

/** Whether the request announces a body (a declared length or a chunked one). */
export function announcesBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length']) > 0;
}

/**
 * The session behind the request's bearer token, or null without a usable
 * one (none, expired, revoked): GraphQL's login and public fields need none.
 * Sets the body's allowance to match.
 */
export async function optionalSession(sessions: SessionService, request: FastifyRequest): Promise<Actor | null> {
  let actor: Actor | null = null;
  const { authorization } = request.headers;
  if (authorization !== undefined) {
    try {
      actor = await sessions.authenticate(authorization, request.ip);
    } catch (error) {
      // A bad session only matters to operations that need one; they re-raise the 401.
      if (!(error instanceof AppError && error.kind === 'authentication')) throw error;
    }
  }
  request.bodyAllowance = actor === null ? PRE_AUTH_BODY : SESSION_BODY;
  return actor;
}

/**
 * The session behind the request's bearer token, or the 401 before any of the
 * body is read (its connection then closes: the body stays unread).
 */
export async function requiredSession(sessions: SessionService, request: FastifyRequest, reply: FastifyReply): Promise<Actor> {
  try {
    const actor = await sessions.authenticate(request.headers.authorization, request.ip);
    request.bodyAllowance = SESSION_BODY;
    return actor;
  } catch (error) {
    if (announcesBody(request.headers)) void reply.header('connection', 'close');
    throw error;
  }
}
