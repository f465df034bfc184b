import { invalid } from '../errors';
import type { GuardrailPolicy } from '../core/catalog.types';
import type { DetectorCategory } from './detector.types';

export type { GuardrailPolicy } from '../core/catalog.types';

/** A policy that does something; `off` detectors are not run at all. */
export type ActivePolicy = Exclude<GuardrailPolicy, 'off'>;

/** docs/architecture.md §6 defaults. */
export const DEFAULT_POLICY_BY_CATEGORY: Readonly<Record<DetectorCategory, GuardrailPolicy>> = {
  pii: 'redact',
  secret: 'redact',
  injection: 'flag',
  blocklist: 'block',
};

/**
 * Rules of the built-in detectors with their category, so policies can be
 * resolved without building detectors. A Map, not an object: rule names
 * come from callers (`PUT …/guardrails/{rule}`), and `"__proto__" in {}` or
 * `"toString" in {}` is true for any plain object.
 */
export const BUILT_IN_RULES: ReadonlyMap<string, DetectorCategory> = new Map<string, DetectorCategory>([
  ['cn-id-card', 'pii'],
  ['cn-mobile', 'pii'],
  ['bank-card', 'pii'],
  ['email', 'pii'],
  ['api-secret', 'secret'],
  ['prompt-injection', 'injection'],
  ['block-list', 'blocklist'],
]);

/** Category names, which an override layer may use for all of their rules. */
const CATEGORIES: ReadonlySet<string> = new Set(Object.keys(DEFAULT_POLICY_BY_CATEGORY));

/** True for the name of a built-in rule (an allow-list: nothing inherited from Object.prototype). */
export function isBuiltInRule(rule: unknown): rule is string {
  return typeof rule === 'string' && BUILT_IN_RULES.has(rule);
}

export const GUARDRAIL_POLICIES = ['block', 'redact', 'flag', 'off'] as const satisfies readonly GuardrailPolicy[];
const POLICIES: ReadonlySet<string> = new Set<string>(GUARDRAIL_POLICIES);

export function isGuardrailPolicy(value: unknown): value is GuardrailPolicy {
  return typeof value === 'string' && POLICIES.has(value);
}

export type GuardrailPolicies = Readonly<Record<string, GuardrailPolicy>>;

/** Keys an override layer may use: a rule name, or a category name standing for each of its rules. */
export function isPolicyKey(key: string): boolean {
  return BUILT_IN_RULES.has(key) || CATEGORIES.has(key);
}

/**
 * Every built-in rule's effective policy: its category default, overridden
 * (catalog, then account) where given. A layer may name a category (`pii`)
 * for all its rules; a rule named in the same layer wins over its category.
 * An unknown name is rejected rather than ignored: a typo in an override
 * would otherwise silently leave the default in force.
 */
export function resolvePolicies(
  ...overrides: ReadonlyArray<Readonly<Partial<Record<string, GuardrailPolicy>>>>
): GuardrailPolicies {
  const resolved: Record<string, GuardrailPolicy> = {};
  for (const [rule, category] of BUILT_IN_RULES) resolved[rule] = DEFAULT_POLICY_BY_CATEGORY[category];
  for (const layer of overrides) {
    const entries = Object.entries(layer).filter((entry): entry is [string, GuardrailPolicy] => entry[1] !== undefined);
    for (const [key, policy] of entries) {
      if (!isPolicyKey(key)) throw invalid(`guardrails.policies.${key}`, `Unknown guardrail rule "${key}"`, 'unknown_guardrail_rule');
      if (!POLICIES.has(policy)) throw invalid(`guardrails.policies.${key}`, `Guardrail policy must be block, redact, flag or off`);
    }
    for (const [key, policy] of entries) {
      if (BUILT_IN_RULES.has(key)) continue;
      for (const [rule, category] of BUILT_IN_RULES) if (category === key) resolved[rule] = policy;
    }
    for (const [key, policy] of entries) if (BUILT_IN_RULES.has(key)) resolved[key] = policy;
  }
  return resolved;
}
