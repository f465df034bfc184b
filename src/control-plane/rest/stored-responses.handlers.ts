import type { StoredResponsesService } from '../../domain/stored/stored-responses.service';
import type { OperationHandler } from '../../http/openapi-router';
import { actorOf } from '../request-actor';

export function storedResponsesHandlers(stored: StoredResponsesService): Record<string, OperationHandler> {
  return {
    purgeStoredResponses: async ({ request }) => ({ deleted: await stored.purge(actorOf(request)) }),
  };
}
