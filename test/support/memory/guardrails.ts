import type { GuardrailOverrideRecord, GuardrailPolicyRepository } from '../../../src/domain/guardrails/account-guardrail-policy.repository';
import type { Tx } from '../../../src/domain/transaction';
import { MemoryRows } from './transactor';

/** account_guardrail_policies in memory: one override per account and rule. */
export class MemoryGuardrailPolicyRepository extends MemoryRows<GuardrailOverrideRecord> implements GuardrailPolicyRepository {
  async forAccount(accountId: string): Promise<GuardrailOverrideRecord[]> {
    return this.all()
      .filter((o) => o.accountId === accountId)
      .map((o) => structuredClone(o));
  }

  async find(_tx: Tx, accountId: string, rule: string): Promise<GuardrailOverrideRecord | null> {
    const found = this.all().find((o) => o.accountId === accountId && o.rule === rule);
    return found ? structuredClone(found) : null;
  }

  async insert(_tx: Tx, override: GuardrailOverrideRecord): Promise<void> {
    if (this.all().some((o) => o.accountId === override.accountId && o.rule === override.rule)) throw new Error('duplicate (account, rule)');
    this.rows.set(override.id, structuredClone(override));
  }

  async update(_tx: Tx, id: string, change: Pick<GuardrailOverrideRecord, 'policy' | 'updatedAt'>): Promise<void> {
    const row = this.rows.get(id);
    if (!row) throw new Error(`no override ${id}`);
    Object.assign(row, structuredClone(change));
  }

  async remove(_tx: Tx, accountId: string, rule: string): Promise<void> {
    for (const o of this.all()) if (o.accountId === accountId && o.rule === rule) this.rows.delete(o.id);
  }

  /** A stored override as an older gateway might have left it (tests). */
  add(override: GuardrailOverrideRecord): void {
    this.rows.set(override.id, structuredClone(override));
  }
}
