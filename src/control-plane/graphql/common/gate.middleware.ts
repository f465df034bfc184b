import type { MiddlewareFn } from 'type-graphql';
import { requireActor, type GraphqlContext } from './context';

const ignore = (): void => undefined;

/**
 * Puts a database-backed field through the control-plane gate. One request
 * is one caller of the gate: its fields take their turns one after another
 * (GraphQL would start every root field at once), all within the deadline
 * set when the first of them asked, so a request with many fields holds one
 * connection at a time and answers `control_plane_timeout` when its time is
 * up rather than keep reading.
 */
export const gated: MiddlewareFn<GraphqlContext> = async ({ context }, next) => {
  const actor = await requireActor(context);
  const { gate } = context;
  const lane = (context.lane ??= { deadline: gate.deadline(), tail: Promise.resolve() });
  const turn = lane.tail.then(() => gate.run(actor.accountId, next, lane.deadline));
  lane.tail = turn.then(ignore, ignore);
  return turn;
};
