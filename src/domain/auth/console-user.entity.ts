import { defineEntity, p } from '@mikro-orm/core';
import { AccountSchema } from '../accounts/account.entity';

export const ConsoleUserSchema = defineEntity({
  name: 'ConsoleUser',
  tableName: 'console_users',
  properties: {
    id: p.string().length(40).primary(),
    account: () => p.manyToOne(AccountSchema),
    email: p.string().length(254).unique(),
    passwordHash: p.string().length(255),
    role: p.enum(['owner', 'admin', 'viewer'] as const),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type ConsoleUser = InstanceType<typeof ConsoleUserSchema.class>;
