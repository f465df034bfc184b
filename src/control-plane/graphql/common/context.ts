import type { FastifyBaseLogger } from 'fastify';
import { createParameterDecorator, type ParameterDecorator } from 'type-graphql';
import type { Actor } from '../../../domain/actor';
import type { SessionService } from '../../../domain/auth/session.service';
import type { ControlPlaneGate, Deadline } from '../../control-plane-gate';

/**
 * What one request carries to every resolver: who asks, from where, and its
 * turn at the control-plane gate. Services reach resolvers through their
 * constructors (schema.ts), not through the context.
 */
export interface GraphqlContext {
  /** The caller: null until a valid session is shown. */
  actor: Actor | null;
  /** Asked again when an operation needs a caller the request did not bring, for the precise 401. */
  sessions: Pick<SessionService, 'authenticate'>;
  /** The gate every database-backed field passes (gate.middleware.ts). */
  gate: ControlPlaneGate;
  ip: string;
  authorization: string | undefined;
  /** The request's logger (carries its request id). */
  log: FastifyBaseLogger;
  /** Set by the first database-backed field (gate.middleware.ts): the request's deadline and its fields' queue. */
  lane?: { deadline: Deadline; tail: Promise<unknown> };
}

/**
 * The authenticated caller. Without a usable session this re-asks the session
 * service, which throws the precise 401 (`missing_session` / `invalid_session`).
 */
export async function requireActor(context: GraphqlContext): Promise<Actor> {
  return context.actor ?? context.sessions.authenticate(context.authorization, context.ip);
}

/** `@CurrentActor() actor: Actor` on every operation except `login`. */
export function CurrentActor(): ParameterDecorator {
  return createParameterDecorator<GraphqlContext>(({ context }) => requireActor(context));
}
