// One guardrail engine per account, built from the account's effective
// policies (built-in defaults ← catalog ← account) and dropped when they
// change. Accounts with the same policies share one engine; the detectors
// are stateless and shared by all of them.
import type { Detector } from './detector.types';
import { createGuardrails, type Guardrails } from './guardrail-engine';
import type { GuardrailPolicies } from './guardrail-policy';

export type PolicyLoader = (accountId: string) => Promise<GuardrailPolicies>;

export class GuardrailEngineCache {
  private readonly byAccount = new Map<string, Promise<Guardrails>>();
  private readonly byPolicies = new Map<string, Guardrails>();

  constructor(
    private readonly detectors: readonly Detector[],
    private readonly load: PolicyLoader,
  ) {}

  /** The account's engine; loads its policies on first use and after each change. */
  get(accountId: string): Promise<Guardrails> {
    const cached = this.byAccount.get(accountId);
    if (cached !== undefined) return cached;
    const loading = this.load(accountId).then((policies) => this.engineFor(policies));
    this.byAccount.set(accountId, loading);
    // A failed load is not remembered: the next call tries again.
    loading.catch(() => {
      if (this.byAccount.get(accountId) === loading) this.byAccount.delete(accountId);
    });
    return loading;
  }

  /** The account's policies changed (here or in another process): the next call reloads them. */
  forget(accountId: string): void {
    this.byAccount.delete(accountId);
  }

  /** Anything may have changed (e.g. the change feed reconnected). */
  clear(): void {
    this.byAccount.clear();
  }

  private engineFor(policies: GuardrailPolicies): Guardrails {
    const key = JSON.stringify(Object.entries(policies).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let engine = this.byPolicies.get(key);
    if (engine === undefined) {
      engine = createGuardrails({ detectors: this.detectors, policies });
      this.byPolicies.set(key, engine);
    }
    return engine;
  }
}
