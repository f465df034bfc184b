import type { GuardrailPolicyService, GuardrailRuleView } from '../../domain/guardrails/guardrail-policy.service';
import type { components } from '../../generated/control';
import type { OperationHandler } from '../../http/openapi-router';
import { actorOf } from '../request-actor';

type GuardrailRule = components['schemas']['GuardrailRule'];

export function guardrailRule(view: GuardrailRuleView): GuardrailRule {
  return {
    rule: view.rule,
    category: view.category,
    default_policy: view.defaultPolicy,
    policy: view.policy,
    overridden: view.overridden,
    updated_at: view.updatedAt === null ? null : view.updatedAt.toISOString(),
  };
}

export function guardrailHandlers(policies: GuardrailPolicyService): Record<string, OperationHandler> {
  return {
    listGuardrailPolicies: async ({ request }) => ({ items: (await policies.list(actorOf(request))).map(guardrailRule) }),
    setGuardrailPolicy: async ({ request, params, body }) => {
      const policy = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).policy : undefined;
      return guardrailRule(await policies.set(actorOf(request), params.rule, policy));
    },
    resetGuardrailPolicy: async ({ request, params }) => guardrailRule(await policies.reset(actorOf(request), params.rule)),
  };
}
