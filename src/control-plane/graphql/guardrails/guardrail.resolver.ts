import { Arg, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { Actor } from '../../../domain/actor';
import type { GuardrailPolicyService, GuardrailRuleView } from '../../../domain/guardrails/guardrail-policy.service';
import { CurrentActor } from '../common/context';
import { gated } from '../common/gate.middleware';
import { Cost } from '../common/query-cost';
import { storableArgs } from '../common/storable-args.middleware';
import { GuardrailPolicyType } from './guardrail-policy.type';

const toGuardrailPolicyType = (view: GuardrailRuleView): GuardrailPolicyType => ({
  rule: view.rule,
  category: view.category,
  defaultPolicy: view.defaultPolicy,
  policy: view.policy,
  overridden: view.overridden,
  updatedAt: view.updatedAt === null ? null : view.updatedAt.toISOString(),
});

@Resolver()
@UseMiddleware(storableArgs, gated)
export class GuardrailResolver {
  constructor(private readonly policies: GuardrailPolicyService) {}

  @Query(() => [GuardrailPolicyType], { description: 'Every guardrail rule with its category, default and effective policy.' })
  @Cost({ dbRoundTrips: 1 })
  async guardrailPolicies(@CurrentActor() actor: Actor): Promise<GuardrailPolicyType[]> {
    return (await this.policies.list(actor)).map(toGuardrailPolicyType);
  }

  @Mutation(() => GuardrailPolicyType, { description: 'Sets the account’s policy for one rule; owners and admins only.' })
  // A transaction: the account locked, the rule's row, its change, the audit event, commit.
  @Cost({ dbRoundTrips: 6 })
  async setGuardrailPolicy(
    @CurrentActor() actor: Actor,
    @Arg('rule', () => String) rule: string,
    @Arg('policy', () => String, { description: 'block | redact | flag | off' }) policy: string,
  ): Promise<GuardrailPolicyType> {
    return toGuardrailPolicyType(await this.policies.set(actor, { rule, policy }));
  }

  @Mutation(() => GuardrailPolicyType, { description: 'Drops the account’s policy for one rule, so it follows the default again; owners and admins only.' })
  @Cost({ dbRoundTrips: 6 })
  async resetGuardrailPolicy(
    @CurrentActor() actor: Actor,
    @Arg('rule', () => String) rule: string,
  ): Promise<GuardrailPolicyType> {
    return toGuardrailPolicyType(await this.policies.reset(actor, rule));
  }
}
