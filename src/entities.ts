// The tables the ORM knows, for the composition roots that open the
// database (main.ts, the admin CLI, the cluster primary, scripts and tests):
// each entity lives beside the code that owns its rows (docs/architecture.md
// §14.1), so the list is drawn up here, above them, and handed down to
// src/db, which imports nothing above it.
import { AccountSchema } from './domain/accounts/account.entity';
import { AccountGuardrailPolicySchema } from './domain/guardrails/account-guardrail-policy.entity';
import { ApiKeySchema } from './domain/keys/api-key.entity';
import { AuditEventSchema } from './domain/audit/audit-event.entity';
import { ConsoleSessionSchema } from './domain/auth/console-session.entity';
import { ConsoleUserSchema } from './domain/auth/console-user.entity';
import { AccountCreditAlertSchema, WebhookDeliverySchema, WebhookEventSchema, WebhookSchema } from './domain/webhooks/webhook.entity';
import { ConversationItemSchema, ConversationSchema, StoredItemSchema, StoredResponseSchema } from './data-plane/stored/stored-response.entity';

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
