import { AccountSchema } from './account.entity';
import { AccountGuardrailPolicySchema } from './account-guardrail-policy.entity';
import { ApiKeySchema } from '../../domain/keys/api-key.entity';
import { AuditEventSchema } from '../../domain/audit/audit-event.entity';
import { ConsoleSessionSchema } from './console-session.entity';
import { ConsoleUserSchema } from './console-user.entity';
import { AccountCreditAlertSchema, WebhookDeliverySchema, WebhookEventSchema, WebhookSchema } from '../../domain/webhooks/webhook.entity';
import { ConversationItemSchema, ConversationSchema, StoredItemSchema, StoredResponseSchema } from './stored-response.entity';

export const entities = [
  AccountSchema, ConsoleUserSchema, ConsoleSessionSchema, ApiKeySchema, AuditEventSchema, AccountGuardrailPolicySchema,
  StoredResponseSchema,
  StoredItemSchema,
  ConversationSchema,
  ConversationItemSchema,
  AccountCreditAlertSchema,
  WebhookSchema,
  WebhookEventSchema,
  WebhookDeliverySchema,
];
