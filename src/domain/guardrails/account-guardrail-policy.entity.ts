import { defineEntity, p } from '@mikro-orm/core';
import { GUARDRAIL_POLICIES } from '../../guardrails/guardrail-policy';
import { AccountSchema } from '../accounts/account.entity';

/**
 * An account's override of one guardrail rule's policy (docs/architecture.md §6). Rules
 * without a row keep the catalog's policy, or else the built-in default.
 */
export const AccountGuardrailPolicySchema = defineEntity({
  name: 'AccountGuardrailPolicy',
  tableName: 'account_guardrail_policies',
  properties: {
    id: p.string().length(40).primary(),
    account: () => p.manyToOne(AccountSchema),
    /** A detector rule name, e.g. `cn-mobile`; checked against the built-in rules on write. */
    rule: p.string().length(64),
    policy: p.enum(GUARDRAIL_POLICIES),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  uniques: [{ name: 'account_guardrail_policies_account_rule_unique', properties: ['account', 'rule'] }],
});

export type AccountGuardrailPolicy = InstanceType<typeof AccountGuardrailPolicySchema.class>;
