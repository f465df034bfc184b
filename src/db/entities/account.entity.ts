import { defineEntity, p } from '@mikro-orm/core';

export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: {
    id: p.string().length(40).primary(),
    name: p.string().length(128).unique(),
    timezone: p.string().length(64),
    currency: p.string().length(8),
    /** Monthly credit limit in micro-units of `currency`; null = unlimited. */
    creditLimitMicros: p.bigint('number').nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type Account = InstanceType<typeof AccountSchema.class>;
