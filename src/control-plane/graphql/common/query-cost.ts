import type { GraphQLField } from 'graphql';
import { Extensions } from 'type-graphql';

/**
 * What a root field costs the database: the round trips its service makes
 * (the session look-up every request makes is not counted), and, for a paged
 * field, the page size it uses when the query names none and the largest it
 * allows (a page size given by a variable counts as that).
 */
export interface FieldCost {
  dbRoundTrips: number;
  page?: { default: number; max: number };
}

/** Declares a query's or mutation's cost (cost-limit.rule.ts reads it from the schema). */
export const Cost = (cost: FieldCost): ReturnType<typeof Extensions> => Extensions({ cost });

/** The cost a field declared, if any. */
export function fieldCost(field: GraphQLField<unknown, unknown> | undefined): FieldCost | undefined {
  const cost = field?.extensions?.cost as FieldCost | undefined;
  return cost && typeof cost.dbRoundTrips === 'number' ? cost : undefined;
}
