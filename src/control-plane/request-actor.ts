// The caller of a control-plane request. Both transports look the console
// session up in their onRequest hook (session-first.ts) and keep it on the
// request, so handlers and resolvers never read the Authorization header.
import type { FastifyRequest } from 'fastify';
import { assertCanMutate, type Actor } from '../domain/actor';
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

/**
 * The caller of a change, checked before its body is read: a viewer gets
 * 403 whatever it sent, as the domain would answer it, and learns nothing of
 * the body's rules. The service checks the role again.
 */
export function mutatorOf(request: FastifyRequest): Actor {
  const actor = actorOf(request);
  assertCanMutate(actor);
  return actor;
}
