import { Migration } from '@mikro-orm/migrations';

// The credit ledger (docs/architecture.md §9): admission reserves each call's worst case
// against the account's remaining monthly credit before any upstream call.
// Every gateway process holds one lease row per (account, month) it serves:
// headroom taken from the limit for its calls in flight (and, far from the
// limit, a slice for calls about to come). Metering moves a call's exact cost
// from its process's lease into account_month_usage in the usage statement,
// so used + leases never passes the limit; a dead process's lease expires.
export class Migration20261127125800_credit_leases extends Migration {
  override name = 'Migration20261127125800_credit_leases';

  override up(): void {
    this.addSql(`alter table "accounts" add "credit_overflow" varchar(20) not null default 'refuse';`);
    this.addSql(`alter table "accounts" add constraint "accounts_credit_overflow_check" check ("credit_overflow" in ('refuse', 'lower_max_tokens'));`);
    this.addSql(`create table "credit_leases" (
      "account_id" varchar(40) not null references "accounts" ("id"),
      "month" char(7) not null,
      "holder" varchar(80) not null,
      "amount_micros" bigint not null default 0,
      "expires_at" timestamptz not null,
      primary key ("account_id", "month", "holder")
    );`);
    this.addSql(`create index "credit_leases_holder_idx" on "credit_leases" ("holder");`);

    // Grows one process's lease by what it asks for, if the account's
    // headroom allows: at least p_need (else nothing), at most p_want plus,
    // far from the limit, an eighth of what is left. The account row's lock
    // orders the growers of one account (other accounts never wait); the
    // usage statement needs no lock, because it moves an amount from a lease
    // to the month's usage in one commit, which leaves the sum unchanged.
    // used and leases are read by one statement, so in one snapshot.
    this.addSql(`create or replace function gateway_credit_grow(
        p_account varchar, p_month varchar, p_holder varchar, p_need bigint, p_want bigint, p_ttl_ms integer)
      returns table (granted bigint, headroom bigint, credit_limit bigint)
      language plpgsql as $$
      declare
        v_limit bigint;
        v_taken bigint;
        v_headroom bigint;
        v_grant bigint;
      begin
        select a.credit_limit_micros into v_limit from accounts a where a.id = p_account for no key update;
        if v_limit is null then
          return query select p_want, null::bigint, null::bigint;
          return;
        end if;
        select coalesce((select u.amount_micros from account_month_usage u where u.account_id = p_account and u.month = p_month), 0)
             + coalesce((select sum(l.amount_micros) from credit_leases l
                         where l.account_id = p_account and l.month = p_month
                           and (l.holder = p_holder or l.expires_at > now())), 0)
          into v_taken;
        v_headroom := greatest(v_limit - v_taken, 0);
        if v_headroom < p_need then
          v_grant := 0;
        else
          v_grant := least(v_headroom, p_want + case when v_headroom - p_want >= 64 * greatest(p_want, 1) then (v_headroom - p_want) / 8 else 0 end);
        end if;
        insert into credit_leases as l (account_id, month, holder, amount_micros, expires_at)
          values (p_account, p_month, p_holder, v_grant, now() + p_ttl_ms * interval '1 millisecond')
          on conflict (account_id, month, holder)
          do update set amount_micros = l.amount_micros + excluded.amount_micros, expires_at = excluded.expires_at;
        return query select v_grant, v_headroom - v_grant, v_limit;
      end $$;`);
  }

  override down(): void {
    this.addSql(`drop function if exists gateway_credit_grow(varchar, varchar, varchar, bigint, bigint, integer);`);
    this.addSql(`drop table if exists "credit_leases";`);
    this.addSql(`alter table "accounts" drop constraint if exists "accounts_credit_overflow_check";`);
    this.addSql(`alter table "accounts" drop column "credit_overflow";`);
  }
}
