import { isObject } from '../../core/json-edit';
import { invalidPolicy, type GuardrailPolicyService, type GuardrailRuleView, type SetGuardrailPolicyInput } from '../../domain/guardrails/guardrail-policy.service';
import type { components } from '../../generated/control';
import type { OperationHandler } from '../../http/openapi-router';
import { actorOf, mutatorOf } from '../request-actor';

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

/** `PUT /account/guardrails/{rule}` with `{ policy }`: a policy that is not a string is refused here, naming it. */
function setPolicyInput(rule: string, body: unknown): SetGuardrailPolicyInput {
  const policy = isObject(body) ? body.policy : undefined;
  if (typeof policy !== 'string') throw invalidPolicy();
  return { rule, policy };
}

export function guardrailHandlers(policies: GuardrailPolicyService): Record<string, OperationHandler> {
  return {
    listGuardrailPolicies: async ({ request }) => ({ items: (await policies.list(actorOf(request))).map(guardrailRule) }),
    setGuardrailPolicy: async ({ request, params, body }) => guardrailRule(await policies.set(mutatorOf(request), setPolicyInput(params.rule!, body))),
    resetGuardrailPolicy: async ({ request, params }) => guardrailRule(await policies.reset(actorOf(request), params.rule!)),
  };
}
