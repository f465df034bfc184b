import type { CreditAlertsView, DeliveryView, WebhookService, WebhookView } from '../../domain/webhooks/webhook.service';
import type { components } from '../../generated/control';
import type { OperationHandler } from '../../http/openapi-router';
import { actorOf, mutatorOf } from '../request-actor';
import { intParam } from './query-params';
import { creditAlertsInput, webhookInput } from './webhook.mapper';

type Schemas = components['schemas'];

const creditAlerts = (view: CreditAlertsView): Schemas['CreditAlerts'] => ({
  thresholds: view.thresholds,
  month: view.month,
  reached_threshold: view.reachedThreshold,
});

const webhook = (view: WebhookView): Schemas['Webhook'] => ({
  webhook_id: view.id,
  url: view.url,
  events: view.events as Schemas['WebhookEventType'][],
  created_at: view.createdAt.toISOString(),
});

const delivery = (view: DeliveryView): Schemas['WebhookDelivery'] => ({
  id: view.id,
  event_id: view.eventId,
  type: view.type as Schemas['WebhookEventType'],
  state: view.state,
  attempt: view.attempts,
  status_code: view.lastStatusCode,
  error: view.lastError,
  next_retry_at: view.nextAttemptAt?.toISOString() ?? null,
  delivered_at: view.deliveredAt?.toISOString() ?? null,
  created_at: view.createdAt.toISOString(),
});

export function webhookHandlers(webhooks: WebhookService): Record<string, OperationHandler> {
  return {
    getCreditAlerts: async ({ request }) => creditAlerts(await webhooks.creditAlerts(actorOf(request))),
    setCreditAlerts: async ({ request, body }) => creditAlerts(await webhooks.setCreditAlerts(mutatorOf(request), creditAlertsInput(body))),
    listWebhooks: async ({ request }) => ({ items: (await webhooks.list(actorOf(request))).map(webhook) }),
    createWebhook: async ({ request, reply, body }) => {
      const created = await webhooks.create(mutatorOf(request), webhookInput(body));
      void reply.code(201);
      return { ...webhook(created.webhook), secret: created.secret } satisfies Schemas['CreatedWebhook'];
    },
    deleteWebhook: async ({ request, reply, params }) => {
      await webhooks.delete(actorOf(request), params.webhook_id!);
      void reply.code(204);
      return null;
    },
    listWebhookDeliveries: async ({ request, params, query }) => {
      const page = intParam(query, 'page', 1, 1, 1_000_000);
      const pageSize = intParam(query, 'page_size', 50, 1, 200);
      const result = await webhooks.deliveries(actorOf(request), params.webhook_id!, { page, pageSize });
      return { total: result.total, page, page_size: pageSize, items: result.items.map(delivery) };
    },
  };
}
