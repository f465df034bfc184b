import {
  GraphQLError,
  Kind,
  getNamedType,
  isInterfaceType,
  isObjectType,
  type ASTVisitor,
  type FieldNode,
  type GraphQLNamedType,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { appError } from '../../errors';
import { fieldCost, type FieldCost } from './common/query-cost';

/** What one database round trip costs: as much as a page of a few hundred small rows, which is what it holds a connection for. */
export const ROUND_TRIP_COST = 1_000;

/**
 * The most an operation may cost. The console's heaviest query, the keys
 * page (100 keys, the credit status and the month's settlement: 9 round
 * trips), costs about 10,100; the largest page of usage records with every
 * field about 8,500. Twice the first leaves room for scripts and no room for
 * a flood: at most 20 round trips per request.
 */
export const MAX_QUERY_COST = 20_000;

/** How often one field may be asked for in one request (aliases, repeats and fragments included). */
export const MAX_FIELD_REPEATS = 5;

/** Root fields that declare no cost (there should be none: a unit test checks) count as one round trip. */
const UNDECLARED: FieldCost = { dbRoundTrips: 1 };

/**
 * Rejects operations that would cost the database more than `maxCost`
 * (issues 15 and 28: 200 aliases of a wide `usageRecords`, then 10,000 of
 * `creditStatus { month }`, each from one viewer, stalled every tenant).
 * Every field costs 1; a field that reads the database costs ROUND_TRIP_COST
 * per round trip it makes; a paged field's selection costs once per item it
 * may return. And any field asked for more than MAX_FIELD_REPEATS times at
 * one place (by aliases or repeated fragments) is refused on its own.
 * Fragments are counted where they are spread; the walk stops as soon as the
 * operation is over budget, so a fragment bomb costs only that much work.
 */
export function costLimitRule(maxCost: number = MAX_QUERY_COST, maxRepeats: number = MAX_FIELD_REPEATS): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const visiting = new Set<string>();
    let cost = 0;
    /** Times each field was asked for, keyed by its path of field names (aliases do not make a new one). */
    const repeats = new Map<string, number>();
    /** Fields asked for too often, by path, in the order met (the first is the one to name: fields under it repeat with it). */
    const repeated: string[] = [];

    const pageSize = (field: FieldNode, page: { default: number; max: number } | undefined): number => {
      if (!page) return 1;
      const argument = field.arguments?.find((arg) => arg.name.value === 'pageSize');
      if (!argument) return page.default;
      if (argument.value.kind === Kind.INT) return Math.max(1, Number(argument.value.value));
      return page.max;
    };

    const walk = (selectionSet: SelectionSetNode, parent: GraphQLNamedType | undefined, path: string, root: boolean): void => {
      for (const selection of selectionSet.selections) {
        if (cost > maxCost) return;
        if (selection.kind === Kind.FIELD) {
          const name = selection.name.value;
          const key = `${path}.${name}`;
          const times = (repeats.get(key) ?? 0) + 1;
          repeats.set(key, times);
          if (times === maxRepeats + 1) repeated.push(key.slice(1));
          const definition = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
          const declared = fieldCost(definition) ?? (root && !name.startsWith('__') ? UNDECLARED : undefined);
          cost += 1 + (declared?.dbRoundTrips ?? 0) * ROUND_TRIP_COST;
          if (!selection.selectionSet) continue;
          const items = pageSize(selection, declared?.page);
          const before = cost;
          walk(selection.selectionSet, definition ? getNamedType(definition.type) : undefined, key, false);
          // The selection repeats once per item of the page.
          cost = before + (cost - before) * items;
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          const condition = selection.typeCondition ? context.getSchema().getType(selection.typeCondition.name.value) : parent;
          walk(selection.selectionSet, condition ?? undefined, path, root);
        } else {
          const name = selection.name.value;
          const fragment = context.getFragment(name);
          // Unknown and cyclic fragments are reported by graphql-js's own rules.
          if (!fragment || visiting.has(name)) continue;
          visiting.add(name);
          walk(fragment.selectionSet, context.getSchema().getType(fragment.typeCondition.name.value) ?? undefined, path, root);
          visiting.delete(name);
        }
      }
    };

    return {
      OperationDefinition(operation) {
        cost = 0;
        repeats.clear();
        repeated.length = 0;
        walk(operation.selectionSet, context.getSchema().getRootType(operation.operation) ?? undefined, '', true);
        if (repeated.length > 0) {
          const error = appError('tooManyAliases', { field: repeated[0]!, max: maxRepeats });
          context.reportError(new GraphQLError(error.message, { nodes: [operation], originalError: error }));
        }
        if (cost > maxCost) {
          const error = appError('queryTooCostly', { max: maxCost, roundTrip: ROUND_TRIP_COST });
          context.reportError(new GraphQLError(error.message, { nodes: [operation], originalError: error }));
        }
      },
    };
  };
}
