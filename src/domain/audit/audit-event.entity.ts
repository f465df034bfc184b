import { defineEntity, p } from '@mikro-orm/core';
import { AccountSchema } from '../accounts/account.entity';

export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

export const AuditEventSchema = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_events',
  properties: {
    id: p.string().length(40).primary(),
    account: () => p.manyToOne(AccountSchema),
    /** Console user id, or null for the operator CLI / system. */
    actorUserId: p.string().length(40).nullable(),
    /** Human label of the actor: an e-mail, `operator-cli` or `system`. */
    actor: p.string().length(254),
    action: p.string().length(64),
    apiKeyId: p.string().length(40).nullable(),
    changes: p.json<AuditChanges>(),
    ip: p.string().length(64).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['account', 'createdAt'] }],
});

export type AuditEvent = InstanceType<typeof AuditEventSchema.class>;
