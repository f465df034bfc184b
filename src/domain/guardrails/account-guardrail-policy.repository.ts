// The account_guardrail_policies table: an account's overrides, one per rule
// (unique). Writes run inside the caller's unit of work, which holds the
// account row's lock, so the first write of a rule cannot race another.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { GuardrailPolicy } from '../../guardrails/guardrail-policy';
import { emOf } from '../pg-transactor';
import type { Tx } from '../transaction';
import { AccountGuardrailPolicySchema, type AccountGuardrailPolicy } from './account-guardrail-policy.entity';

export interface GuardrailOverrideRecord {
  id: string;
  accountId: string;
  rule: string;
  policy: GuardrailPolicy;
  updatedAt: Date;
}

export interface GuardrailPolicyRepository {
  /** The account's overrides, whatever rule they name. */
  forAccount(accountId: string): Promise<GuardrailOverrideRecord[]>;
  /** The account's override of `rule`, read in the unit of work. */
  find(tx: Tx, accountId: string, rule: string): Promise<GuardrailOverrideRecord | null>;
  /** Adds an override of a rule the account has none of. */
  insert(tx: Tx, override: GuardrailOverrideRecord): Promise<void>;
  /** Changes an override's policy. */
  update(tx: Tx, id: string, change: Pick<GuardrailOverrideRecord, 'policy' | 'updatedAt'>): Promise<void>;
  remove(tx: Tx, accountId: string, rule: string): Promise<void>;
}

const record = (row: AccountGuardrailPolicy, accountId: string): GuardrailOverrideRecord => ({
  id: row.id,
  accountId,
  rule: row.rule,
  policy: row.policy,
  updatedAt: row.updatedAt,
});

export class PgGuardrailPolicyRepository implements GuardrailPolicyRepository {
  constructor(private readonly orm: MikroORM) {}

  async forAccount(accountId: string): Promise<GuardrailOverrideRecord[]> {
    return (await this.orm.em.fork().find(AccountGuardrailPolicySchema, { account: accountId })).map((row) => record(row, accountId));
  }

  async find(tx: Tx, accountId: string, rule: string): Promise<GuardrailOverrideRecord | null> {
    const row = await emOf(tx).findOne(AccountGuardrailPolicySchema, { account: accountId, rule });
    return row ? record(row, accountId) : null;
  }

  async insert(tx: Tx, override: GuardrailOverrideRecord): Promise<void> {
    const { accountId, ...rest } = override;
    emOf(tx).create(AccountGuardrailPolicySchema, { ...rest, account: accountId });
    await emOf(tx).flush();
  }

  async update(tx: Tx, id: string, change: Pick<GuardrailOverrideRecord, 'policy' | 'updatedAt'>): Promise<void> {
    const em = emOf(tx);
    // Found in the unit of work's identity map: `find` read it there.
    const row = await em.findOneOrFail(AccountGuardrailPolicySchema, { id });
    row.policy = change.policy;
    row.updatedAt = change.updatedAt;
    await em.flush();
  }

  async remove(tx: Tx, accountId: string, rule: string): Promise<void> {
    await emOf(tx).nativeDelete(AccountGuardrailPolicySchema, { account: accountId, rule });
  }
}
