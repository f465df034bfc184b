import { AccountSchema } from './account.entity';
import { AccountGuardrailPolicySchema } from './account-guardrail-policy.entity';
import { ApiKeySchema } from './api-key.entity';
import { AuditEventSchema } from './audit-event.entity';
import { ConsoleSessionSchema } from './console-session.entity';
import { ConsoleUserSchema } from './console-user.entity';

export const entities = [AccountSchema, ConsoleUserSchema, ConsoleSessionSchema, ApiKeySchema, AuditEventSchema, AccountGuardrailPolicySchema];
