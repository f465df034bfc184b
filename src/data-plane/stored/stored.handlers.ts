// Retrieval of stored responses and the Conversations API: transport only,
// every call scoped to the key's account.
import { appError } from '../../errors';
import { unstorableError, unstorableText } from '../../http/storable-text';
import { authenticatedKey, operationsIn, type DataPlaneHandler, type DataPlaneOperation } from '../http/operation';
import type { RawObject } from '../../core/canonical';
import type { StatefulResponses } from './stateful-responses';
import { MAX_ITEMS_PER_ADD, type ListQuery } from './stored-items';

const responseNotFound = (id: string) => appError('responseNotFound', id);

function listQuery(query: Record<string, unknown>): ListQuery {
  return {
    limit: typeof query.limit === 'number' ? query.limit : 20,
    order: query.order === 'asc' ? 'asc' : 'desc',
    ...(typeof query.after === 'string' && query.after !== '' ? { after: query.after } : {}),
  };
}

const metadataOf = (value: unknown): Record<string, string> => (value && typeof value === 'object' ? (value as Record<string, string>) : {});

/** A body the Conversations API keeps: text PostgreSQL cannot store is a 400 naming its field. */
function storable<T>(body: T): T {
  const bad = unstorableText(body);
  if (bad) throw unstorableError(bad);
  return body;
}

/** Stored responses and conversations are the Responses form's: OpenAI's error shape. */
export function storedHandlers(stateful: StatefulResponses): Record<string, DataPlaneOperation> {
  const { responses, conversations } = stateful;
  const account = (request: Parameters<DataPlaneHandler>[0]['request']) => authenticatedKey(request).account.id;
  return operationsIn('openai', {
    getResponse: async ({ request, params }) => {
      const found = await responses.get(account(request), params.response_id!);
      if (!found) throw responseNotFound(params.response_id!);
      return found;
    },
    deleteResponse: async ({ request, params }) => {
      if (!(await responses.delete(account(request), params.response_id!))) throw responseNotFound(params.response_id!);
      return { id: params.response_id, object: 'response', deleted: true };
    },
    listResponseInputItems: async ({ request, params, query }) => {
      const page = await responses.inputItems(account(request), params.response_id!, listQuery(query));
      if (!page) throw responseNotFound(params.response_id!);
      return page;
    },
    createConversation: async ({ request, body }) => {
      const input = storable(body ?? {}) as { items?: unknown[] | null; metadata?: unknown };
      return conversations.create(account(request), metadataOf(input.metadata), input.items ?? []);
    },
    getConversation: async ({ request, params }) => conversations.get(account(request), params.conversation_id!),
    updateConversation: async ({ request, params, body }) =>
      conversations.update(account(request), params.conversation_id!, metadataOf(storable(body as RawObject).metadata)),
    deleteConversation: async ({ request, params }) => {
      await conversations.delete(account(request), params.conversation_id!);
      return { id: params.conversation_id, object: 'conversation.deleted', deleted: true };
    },
    listConversationItems: async ({ request, params, query }) => conversations.listItems(account(request), params.conversation_id!, listQuery(query)),
    createConversationItems: async ({ request, params, body }) => {
      const items = storable(body as { items: unknown[] }).items.slice(0, MAX_ITEMS_PER_ADD);
      const added = await conversations.addItems(account(request), params.conversation_id!, items);
      return {
        object: 'list',
        data: added,
        first_id: added[0]?.id ?? null,
        last_id: added[added.length - 1]?.id ?? null,
        has_more: false,
      };
    },
    getConversationItem: async ({ request, params }) => conversations.item(account(request), params.conversation_id!, params.item_id!),
    deleteConversationItem: async ({ request, params }) => conversations.deleteItem(account(request), params.conversation_id!, params.item_id!),
  });
}
