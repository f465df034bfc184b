// The SQL that turns month totals into credit events in the outbox. The
// usage statement runs it on the totals it has just settled (same
// transaction, no round trip of its own); the dispatcher's sweep runs it on
// every limited account's month, which catches what no settlement crosses —
// an operator lowering the limit, thresholds changed after a crossing. The
// unique dedupe key makes each event happen once per account, month and
// threshold whichever process, statement or sweep writes it first.

import { DEFAULT_THRESHOLDS } from './webhook-events';

/** A new outbox event id (the same shape as newId's: a prefix and 32 more characters). */
export const EVENT_ID_SQL = `'evt_' || replace(gen_random_uuid()::text, '-', '')`;

/**
 * Two insert statements for `with` clauses, reading a relation `totals`
 * (account_id, month, amount_micros, credit_limit_micros, before_micros).
 * `minimalCall` is the SQL of the at-limit threshold (CreditMonitor). With
 * `crossingOnly`, only totals that crossed a mark since `before_micros` emit.
 */
export function creditEventInserts(totals: string, minimalCall: string, crossingOnly: boolean): { thresholds: string; limit: string } {
  const crossedPct = crossingOnly ? 'and t.before_micros * 100 < t.credit_limit_micros * th.pct' : '';
  const crossedLimit = crossingOnly ? `and t.credit_limit_micros - t.before_micros >= ${minimalCall}` : '';
  const data = `'month', t.month, 'used_micros', t.amount_micros, 'limit_micros', t.credit_limit_micros`;
  return {
    thresholds: `insert into webhook_events (id, account_id, type, dedupe_key, data, created_at)
      select ${EVENT_ID_SQL}, t.account_id, 'credit.threshold_reached',
        'credit.threshold_reached:' || t.account_id || ':' || t.month || ':' || th.pct,
        jsonb_build_object('account_id', t.account_id, 'threshold', th.pct, ${data}), now()
      from ${totals} t
      left join account_credit_alerts c on c.account_id = t.account_id
      cross join lateral (select value::int as pct from jsonb_array_elements_text(coalesce(c.thresholds, '${JSON.stringify(DEFAULT_THRESHOLDS)}'::jsonb))) th
      where t.credit_limit_micros is not null and t.amount_micros * 100 >= t.credit_limit_micros * th.pct ${crossedPct}
      on conflict (dedupe_key) do nothing`,
    limit: `insert into webhook_events (id, account_id, type, dedupe_key, data, created_at)
      select ${EVENT_ID_SQL}, t.account_id, 'credit.limit_reached', 'credit.limit_reached:' || t.account_id || ':' || t.month,
        jsonb_build_object('account_id', t.account_id, ${data}), now()
      from ${totals} t
      where t.credit_limit_micros is not null and t.credit_limit_micros - t.amount_micros < ${minimalCall} ${crossedLimit}
      on conflict (dedupe_key) do nothing`,
  };
}
