import { defineEntity, p } from '@mikro-orm/core';
import { ConsoleUserSchema } from './console-user.entity';

export const ConsoleSessionSchema = defineEntity({
  name: 'ConsoleSession',
  tableName: 'console_sessions',
  properties: {
    id: p.string().length(40).primary(),
    user: () => p.manyToOne(ConsoleUserSchema),
    /** SHA-256 (hex) of the bearer token; the token itself is never stored. */
    tokenHash: p.string().length(64).unique(),
    expiresAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    ip: p.string().length(64).nullable(),
  },
});

export type ConsoleSession = InstanceType<typeof ConsoleSessionSchema.class>;
