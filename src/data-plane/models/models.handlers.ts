import { appError } from '../../errors';
import type { Catalog, ModelEntry } from '../../core/catalog.types';
import { authenticatedKey, operationsIn, type DataPlaneOperation } from '../http/operation';

const anthropicModel = (m: ModelEntry) => ({ type: 'model', id: m.name, display_name: m.displayName, created_at: m.createdAt });
const openaiModel = (m: ModelEntry) => ({ id: m.name, object: 'model', created: Math.floor(Date.parse(m.createdAt) / 1000), owned_by: 'tsxt-gateway' });

/**
 * The neutral models in the calling key's scope, in the Anthropic shape when
 * the request carries `anthropic-version`, otherwise the OpenAI shape.
 */
export function modelsHandlers(catalog: Catalog): Record<string, DataPlaneOperation> {
  const visible = (scope: ReadonlySet<string>) => catalog.models.filter((m) => scope.has(m.name));
  // Both clients list models: the error form follows `anthropic-version`, as the answer's shape does.
  return operationsIn('by_version', {
    listModels: async ({ request, query }) => {
      const models = visible(authenticatedKey(request).modelScope);
      if (!request.headers['anthropic-version']) return { object: 'list', data: models.map(openaiModel) };
      const limit = Number(query.limit ?? 20);
      const afterId = typeof query.after_id === 'string' ? query.after_id : undefined;
      const beforeId = typeof query.before_id === 'string' ? query.before_id : undefined;
      let start = 0;
      let end = models.length;
      if (afterId !== undefined) {
        const i = models.findIndex((m) => m.name === afterId);
        if (i < 0) throw appError('invalidCursor', { param: 'after_id', id: afterId }, { field: 'after_id' });
        start = i + 1;
      }
      if (beforeId !== undefined) {
        const i = models.findIndex((m) => m.name === beforeId);
        if (i < 0) throw appError('invalidCursor', { param: 'before_id', id: beforeId }, { field: 'before_id' });
        end = i;
        start = Math.max(start, end - limit);
      }
      const page = models.slice(start, Math.min(end, start + limit));
      const hasMore = beforeId !== undefined ? start > 0 : start + page.length < end;
      return { data: page.map(anthropicModel), has_more: hasMore, first_id: page[0]?.name ?? null, last_id: page[page.length - 1]?.name ?? null };
    },
    getModel: async ({ request, params }) => {
      const key = authenticatedKey(request);
      // An alias answers as the neutral model it stands for; lists name neutral models only.
      const model = catalog.resolveModel(params.model_id!);
      if (!model || !key.modelScope.has(model.name)) throw appError('modelNotListed', params.model_id!);
      return request.headers['anthropic-version'] ? anthropicModel(model) : openaiModel(model);
    },
  });
}
