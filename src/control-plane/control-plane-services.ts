// What the control plane's transports (REST handlers, GraphQL resolvers) call:
// the composition root hands down its services as this interface, so nothing
// here imports the app, and a transport sees only the services it serves.
import type { Catalog } from '../core/catalog.types';
import type { AccountService } from '../domain/accounts/account.service';
import type { AuditService } from '../domain/audit/audit.service';
import type { SessionService } from '../domain/auth/session.service';
import type { GuardrailPolicyService } from '../domain/guardrails/guardrail-policy.service';
import type { ApiKeyService } from '../domain/keys/api-key.service';
import type { KeyRotationService } from '../domain/keys/key-rotation.service';
import type { StoredResponsesService } from '../domain/stored/stored-responses.service';
import type { WebhookService } from '../domain/webhooks/webhook.service';
import type { UsageQueryService } from '../metering/usage-query.service';
import type { ControlPlaneGate } from './control-plane-gate';

export interface ControlPlaneServices {
  sessions: SessionService;
  accounts: AccountService;
  keys: ApiKeyService;
  /** Rotation as one action: the successor key, the old key's grace or emergency suspension. */
  rotations: KeyRotationService;
  audit: AuditService;
  usage: UsageQueryService;
  guardrailPolicies: GuardrailPolicyService;
  /** The purge of an account's stored responses. */
  storedResponses: StoredResponsesService;
  /** Credit-alert thresholds and webhook endpoints (the outbox's dispatcher runs beside them). */
  webhooks: WebhookService;
  /** The catalog's models, for key scopes. */
  catalog: Pick<Catalog, 'models'>;
  /** Admits control-plane database work (REST and GraphQL): a few at once, per account, each request within its deadline. */
  controlPlane: ControlPlaneGate;
}
