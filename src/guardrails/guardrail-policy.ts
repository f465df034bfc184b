import { invalid } from '../errors';
import type { GuardrailPolicy } from '../routing/catalog.types';
import type { DetectorCategory } from './detector.types';

export type { GuardrailPolicy } from '../routing/catalog.types';

/** A policy that does something; `off` detectors are not run at all. */
export type ActivePolicy = Exclude<GuardrailPolicy, 'off'>;

/** DESIGN §8 defaults. */
export const DEFAULT_POLICY_BY_CATEGORY: Readonly<Record<DetectorCategory, GuardrailPolicy>> = {
  pii: 'redact',
  secret: 'redact',
  injection: 'flag',
  blocklist: 'block',
};

/** Rules of the built-in detectors with their category, so policies can be resolved without building detectors. */
export const BUILT_IN_RULES: Readonly<Record<string, DetectorCategory>> = {
  'cn-id-card': 'pii',
  'cn-mobile': 'pii',
  'bank-card': 'pii',
  email: 'pii',
  'api-secret': 'secret',
  'prompt-injection': 'injection',
  'block-list': 'blocklist',
};

const POLICIES: ReadonlySet<string> = new Set<GuardrailPolicy>(['block', 'redact', 'flag', 'off']);

export type GuardrailPolicies = Readonly<Record<string, GuardrailPolicy>>;

/**
 * Every built-in rule's effective policy: its category default, overridden
 * (catalog, then account) where given. An unknown rule name is rejected
 * rather than ignored: a typo in an override would otherwise silently leave
 * the default in force.
 */
export function resolvePolicies(
  ...overrides: ReadonlyArray<Readonly<Partial<Record<string, GuardrailPolicy>>>>
): GuardrailPolicies {
  const resolved: Record<string, GuardrailPolicy> = {};
  for (const [rule, category] of Object.entries(BUILT_IN_RULES)) resolved[rule] = DEFAULT_POLICY_BY_CATEGORY[category];
  for (const layer of overrides) {
    for (const [rule, policy] of Object.entries(layer)) {
      if (policy === undefined) continue;
      if (!(rule in BUILT_IN_RULES)) {
        throw invalid(`guardrails.policies.${rule}`, `Unknown guardrail rule "${rule}"`, 'unknown_guardrail_rule');
      }
      if (!POLICIES.has(policy)) {
        throw invalid(`guardrails.policies.${rule}`, `Guardrail policy must be block, redact, flag or off`);
      }
      resolved[rule] = policy;
    }
  }
  return resolved;
}
