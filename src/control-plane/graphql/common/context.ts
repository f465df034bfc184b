import type { FastifyBaseLogger } from 'fastify';
import { createParameterDecorator, type ParameterDecorator } from 'type-graphql';
import type { Services } from '../../../app';
import type { Actor } from '../../../domain/actor';
import type { Deadline } from '../../control-plane-gate';

/** What every resolver sees: the caller (null until a valid session is shown) and the app's services. */
export interface GraphqlContext {
  actor: Actor | null;
  services: Services;
  ip: string;
  authorization: string | undefined;
  /** The request's logger (carries its request id). */
  log: FastifyBaseLogger;
  /** Set by the first database-backed field (gate.middleware.ts): the request's deadline and its fields' queue. */
  controlPlane?: { deadline: Deadline; tail: Promise<unknown> };
}

/**
 * The authenticated caller. Without a usable session this re-asks the session
 * service, which throws the precise 401 (`missing_session` / `invalid_session`).
 */
export async function requireActor(context: GraphqlContext): Promise<Actor> {
  return context.actor ?? context.services.sessions.authenticate(context.authorization, context.ip);
}

/** `@CurrentActor() actor: Actor` on every operation except `login`. */
export function CurrentActor(): ParameterDecorator {
  return createParameterDecorator<GraphqlContext>(({ context }) => requireActor(context));
}
