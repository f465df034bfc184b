// The account_credit_alerts table: at most one row per account, its chosen
// thresholds (no row = the defaults). The outbox SQL reads it too
// (credit-events.sql.ts).
import type { MikroORM } from '@mikro-orm/postgresql';
import { emOf } from '../pg-transactor';
import type { Tx } from '../transaction';
import { AccountCreditAlertSchema } from './webhook.entity';

export interface CreditAlertRepository {
  /** The account's chosen thresholds; null when it never chose any. */
  thresholds(accountId: string): Promise<number[] | null>;
  /** Sets the account's thresholds and returns what it had chosen before (null = none). */
  replace(tx: Tx, accountId: string, thresholds: number[]): Promise<number[] | null>;
}

export class PgCreditAlertRepository implements CreditAlertRepository {
  constructor(private readonly orm: MikroORM) {}

  async thresholds(accountId: string): Promise<number[] | null> {
    return (await this.orm.em.fork().findOne(AccountCreditAlertSchema, { account: accountId }))?.thresholds ?? null;
  }

  async replace(tx: Tx, accountId: string, thresholds: number[]): Promise<number[] | null> {
    const em = emOf(tx);
    const row = await em.findOne(AccountCreditAlertSchema, { account: accountId });
    const before = row?.thresholds ?? null;
    if (row) row.thresholds = thresholds;
    else em.create(AccountCreditAlertSchema, { account: accountId, thresholds, updatedAt: new Date() });
    await em.flush();
    return before;
  }
}
