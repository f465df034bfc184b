import { GraphQLError, Kind, type ASTVisitor, type FieldNode, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql';
import { AppError } from '../../errors';

/** The most an operation may cost: the largest page of usage records with every field is about 13,000. */
export const MAX_QUERY_COST = 20_000;

/**
 * Paged fields: the page size they use when the query gives none (the
 * schema's default), and the largest they allow, which is what a page size
 * given by a variable counts as (it is not known while validating).
 */
const PAGED: Readonly<Record<string, { default: number; max: number }>> = {
  apiKeys: { default: 20, max: 100 },
  auditEvents: { default: 50, max: 200 },
  usageRecords: { default: 50, max: 500 },
};

/**
 * Rejects operations that would cost more than `maxCost` (issue 15: 200
 * aliases of a wide `usageRecords` query from one console session starved
 * everyone's metering). Every field costs 1, aliases included. A paged field's
 * selection costs once per item it may return, and the page size is its
 * `pageSize` argument or the schema's default. Fragments are counted where
 * they are spread.
 */
export function costLimitRule(maxCost: number = MAX_QUERY_COST): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const visiting = new Set<string>();

    const pageSize = (field: FieldNode): number => {
      const paged = PAGED[field.name.value];
      const argument = field.arguments?.find((arg) => arg.name.value === 'pageSize');
      if (!argument) return paged?.default ?? 1;
      if (argument.value.kind === Kind.INT) return Math.max(1, Number(argument.value.value));
      return paged?.max ?? 1;
    };

    const costOf = (selectionSet: SelectionSetNode): number => {
      let cost = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          cost += 1 + (selection.selectionSet ? pageSize(selection) * costOf(selection.selectionSet) : 0);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          cost += costOf(selection.selectionSet);
        } else {
          const name = selection.name.value;
          const fragment = context.getFragment(name);
          // Unknown and cyclic fragments are reported by graphql-js's own rules.
          if (!fragment || visiting.has(name)) continue;
          visiting.add(name);
          cost += costOf(fragment.selectionSet);
          visiting.delete(name);
        }
        if (cost > maxCost * 1000) return cost;
      }
      return cost;
    };

    return {
      OperationDefinition(operation) {
        const cost = costOf(operation.selectionSet);
        if (cost <= maxCost) return;
        const message = `The query would cost ${cost} (fields × the page sizes they repeat under); at most ${maxCost} is allowed: ask for fewer aliases, fields or items per page`;
        context.reportError(new GraphQLError(message, { nodes: [operation], originalError: new AppError('invalid_request', 'query_too_costly', message) }));
      },
    };
  };
}
