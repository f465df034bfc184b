// Guardrail policies per account (docs/architecture.md §6): every built-in rule's policy
// is its category default, overridden by the catalog's `guardrails.policies`
// and then by the account's own choice, stored in account_guardrail_policies
// until the account resets it. A change is audited and announced on the
// accounts channel, so every gateway process drops the account's cached
// guardrail engine.
import { CHANNELS } from '../../db/change-feed';
import { newId } from '../../db/ids';
import { invalid, notFound } from '../../errors';
import type { DetectorCategory } from '../../guardrails/detector.types';
import {
  BUILT_IN_RULES,
  GUARDRAIL_POLICIES,
  isBuiltInRule,
  isGuardrailPolicy,
  resolvePolicies,
  type GuardrailPolicies,
  type GuardrailPolicy,
} from '../../guardrails/guardrail-policy';
import { assertCanMutate, type Actor } from '../actor';
import type { AccountRepository } from '../accounts/account.repository';
import type { AuditService } from '../audit/audit.service';
import type { Transactor, Tx } from '../transaction';
import type { GuardrailOverrideRecord, GuardrailPolicyRepository } from './account-guardrail-policy.repository';

export interface GuardrailRuleView {
  rule: string;
  category: DetectorCategory;
  /** What the account gets without an override of its own: the built-in default or the catalog's policy. */
  defaultPolicy: GuardrailPolicy;
  /** The policy in force for the account. */
  policy: GuardrailPolicy;
  /** True when the account has chosen a policy for this rule. */
  overridden: boolean;
  /** When the account last chose one; null without an override. */
  updatedAt: Date | null;
}

export interface GuardrailPolicyOptions {
  /** The catalog's `guardrails.policies`. */
  catalogPolicies: Readonly<Partial<Record<string, GuardrailPolicy>>>;
  /** Called after a change commits, for this process's caches (others hear the NOTIFY). */
  onChange?: (accountId: string) => void;
}

interface Override {
  policy: GuardrailPolicy;
  updatedAt: Date;
}

/** One rule's policy for the actor's account (both checked against the known names). */
export interface SetGuardrailPolicyInput {
  rule: string;
  policy: string;
}

/** The 400 naming `policy`: what a policy may be. */
export const invalidPolicy = () => invalid('policy', `policy must be one of: ${GUARDRAIL_POLICIES.join(', ')}`);

export class GuardrailPolicyService {
  private readonly defaults: GuardrailPolicies;

  constructor(
    private readonly transactor: Transactor,
    private readonly overrideRows: GuardrailPolicyRepository,
    private readonly accounts: AccountRepository,
    private readonly audit: AuditService,
    private readonly options: GuardrailPolicyOptions,
  ) {
    this.defaults = resolvePolicies(options.catalogPolicies);
  }

  /** Every built-in rule with its category, default and effective policy, in rule order. */
  async list(actor: Actor): Promise<GuardrailRuleView[]> {
    const overrides = await this.overrides(actor.accountId);
    return [...BUILT_IN_RULES.keys()].map((rule) => this.view(rule, overrides.get(rule)));
  }

  /** The policies the account's requests are checked with. */
  async effectivePolicies(accountId: string): Promise<GuardrailPolicies> {
    const overrides = await this.overrides(accountId);
    return resolvePolicies(this.options.catalogPolicies, Object.fromEntries([...overrides].map(([rule, { policy }]) => [rule, policy])));
  }

  /** Sets one rule's policy for the actor's account; owners and admins only. */
  async set(actor: Actor, input: SetGuardrailPolicyInput): Promise<GuardrailRuleView> {
    assertCanMutate(actor);
    const known = knownRule(input.rule);
    const policy = input.policy;
    if (!isGuardrailPolicy(policy)) throw invalidPolicy();
    return this.change(actor, known, async (tx, existing) => {
      const before = existing?.policy ?? this.defaults[known];
      const now = new Date();
      if (existing) await this.overrideRows.update(tx, existing.id, { policy, updatedAt: now });
      else await this.overrideRows.insert(tx, { id: newId('grp'), accountId: actor.accountId, rule: known, policy, updatedAt: now });
      if (before !== policy) this.audit.record(tx, actor, 'guardrail.policy_set', null, { [known]: { from: before, to: policy } });
      return { override: { policy, updatedAt: now }, changed: true };
    });
  }

  /**
   * Drops the account's override of one rule, so it follows the default
   * (built-in or catalog) again, later catalog changes included; owners and
   * admins only. Without an override nothing changes: no audit, no NOTIFY.
   */
  async reset(actor: Actor, rule: string): Promise<GuardrailRuleView> {
    assertCanMutate(actor);
    const known = knownRule(rule);
    return this.change(actor, known, async (tx, existing) => {
      if (!existing) return { override: undefined, changed: false };
      await this.overrideRows.remove(tx, actor.accountId, known);
      // Audited even when the override equals today's default: the account stops being pinned to it.
      this.audit.record(tx, actor, 'guardrail.policy_reset', null, { [known]: { from: existing.policy, to: this.defaults[known] } });
      return { override: undefined, changed: true };
    });
  }

  /**
   * One change of the actor's override of `rule`, in a transaction holding
   * the account row lock: concurrent changes are serialised, so the first
   * write of a rule cannot race into the unique index. A change is announced
   * to every gateway process once it commits.
   */
  private async change(
    actor: Actor,
    rule: string,
    work: (tx: Tx, existing: GuardrailOverrideRecord | null) => Promise<{ override: Override | undefined; changed: boolean }>,
  ): Promise<GuardrailRuleView> {
    const { override, changed } = await this.transactor.run(async (tx) => {
      const account = await this.accounts.lockForUpdate(tx, actor.accountId);
      if (!account) throw notFound('account_not_found', `account ${actor.accountId} not found`);
      const outcome = await work(tx, await this.overrideRows.find(tx, account.id, rule));
      if (outcome.changed) await tx.notify(CHANNELS.accounts, account.id);
      return outcome;
    });
    if (changed) this.options.onChange?.(actor.accountId);
    return this.view(rule, override);
  }

  private async overrides(accountId: string): Promise<Map<string, Override>> {
    const rows = await this.overrideRows.forAccount(accountId);
    // A stored rule the gateway no longer has is ignored rather than failing the account's every request.
    return new Map(rows.filter((row) => isBuiltInRule(row.rule)).map((row) => [row.rule, { policy: row.policy, updatedAt: row.updatedAt }]));
  }

  private view(rule: string, override: Override | undefined): GuardrailRuleView {
    const defaultPolicy = this.defaults[rule] as GuardrailPolicy;
    return {
      rule,
      category: BUILT_IN_RULES.get(rule) as DetectorCategory,
      defaultPolicy,
      policy: override?.policy ?? defaultPolicy,
      overridden: override !== undefined,
      updatedAt: override?.updatedAt ?? null,
    };
  }
}

/** The rule name if it is one of the built-in rules (an allow-list), else the 400 naming `rule`. */
function knownRule(rule: string): string {
  if (!isBuiltInRule(rule)) throw invalid('rule', `rule must be one of: ${[...BUILT_IN_RULES.keys()].join(', ')}`, 'unknown_guardrail_rule');
  return rule;
}
