import { GraphQLError, Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql';
import { appError } from '../../errors';

export const MAX_QUERY_DEPTH = 8;

/**
 * Rejects operations whose field nesting exceeds `maxDepth`, counting the
 * fields that fragments (named or inline) contribute. Introspection subtrees
 * (`__schema`, `__type`) are left to graphql-js's MaxIntrospectionDepthRule,
 * which is part of the specified rules, so the console's codegen keeps working.
 */
export function depthLimitRule(maxDepth: number = MAX_QUERY_DEPTH): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    // A fragment's own depth does not depend on where it is spread: compute it once.
    const fragmentDepths = new Map<string, number>();
    const visiting = new Set<string>();

    const depthOf = (selectionSet: SelectionSetNode): number => {
      let max = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          const name = selection.name.value;
          if (name === '__schema' || name === '__type') continue;
          max = Math.max(max, 1 + (selection.selectionSet ? depthOf(selection.selectionSet) : 0));
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          max = Math.max(max, depthOf(selection.selectionSet));
        } else {
          max = Math.max(max, fragmentDepth(selection.name.value));
        }
      }
      return max;
    };

    const fragmentDepth = (name: string): number => {
      const known = fragmentDepths.get(name);
      if (known !== undefined) return known;
      const fragment = context.getFragment(name);
      // Unknown and cyclic fragments are reported by graphql-js's own rules.
      if (!fragment || visiting.has(name)) return 0;
      visiting.add(name);
      const depth = depthOf(fragment.selectionSet);
      visiting.delete(name);
      fragmentDepths.set(name, depth);
      return depth;
    };

    return {
      OperationDefinition(operation) {
        const depth = depthOf(operation.selectionSet);
        if (depth <= maxDepth) return;
        const error = appError('queryTooDeep', { depth, max: maxDepth });
        context.reportError(new GraphQLError(error.message, { nodes: [operation], originalError: error }));
      },
    };
  };
}
