// The caller of a control-plane request. Both transports look the console
// session up in their onRequest hook (session-first.ts) and keep it on the
// request, so handlers and resolvers never read the Authorization header.
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../domain/actor';
import { appError } from '../errors';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session's user; null until a valid session is shown. */
    actor: Actor | null;
  }
}

/** The request's caller, or the 401 of a request that reached an operation without a session. */
export function actorOf(request: FastifyRequest): Actor {
  const actor = request.actor;
  if (!actor) throw appError('missingSession');
  return actor;
}
