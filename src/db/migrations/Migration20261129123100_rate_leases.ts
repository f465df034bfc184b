import { Migration } from '@mikro-orm/migrations';

// Per-key rate limits (docs/architecture.md §18; src/metering/rate-limiter.ts): the
// limits of keys and the account's default for new keys; and every
// gateway process holds lease rows on a key's budgets, one per (key, kind,
// UTC minute) for requests and tokens, and one per key for concurrency
// (window_start 0). A minute's rows count until the minute ends; concurrency
// rows until their process stops beating for the lease TTL.
export class Migration20261129123100_rate_leases extends Migration {
  override name = 'Migration20261129123100_rate_leases';

  override up(): void {
    // {requests_per_minute, tokens_per_minute, concurrent_requests}; null = no limit. The account's is what new keys get.
    this.addSql(`alter table "api_keys" add "rate_limit" jsonb null;`);
    this.addSql(`alter table "accounts" add "key_rate_limit" jsonb null;`);
    this.addSql(`create table "rate_leases" (
      "key_id" varchar(40) not null,
      "kind" varchar(12) not null check ("kind" in ('requests', 'tokens', 'concurrent')),
      "window_start" bigint not null,
      "holder" varchar(80) not null,
      "amount" bigint not null default 0,
      "expires_at" timestamptz not null,
      primary key ("key_id", "kind", "window_start", "holder")
    );`);
    this.addSql(`create index "rate_leases_holder_idx" on "rate_leases" ("holder");`);

    // Grows one process's lease by at least p_need if the limit leaves it
    // (else by nothing): far from the limit (16 asks or more left beyond
    // this one) with a spare eighth of what is left, near it exactly p_need,
    // so the rows of a budget never sum past its limit. The advisory lock
    // orders the growers of one key's budget (other keys never wait); the
    // sum is read after it, so every committed grant is counted.
    this.addSql(`create or replace function gateway_rate_grow(
        p_key varchar, p_kind varchar, p_window bigint, p_holder varchar, p_need bigint, p_limit bigint, p_ttl_ms integer)
      returns table (granted bigint, headroom bigint)
      language plpgsql as $$
      declare
        v_taken bigint;
        v_headroom bigint;
        v_grant bigint;
        v_expires timestamptz;
      begin
        perform pg_advisory_xact_lock(hashtextextended('gateway_rate|' || p_key || '|' || p_kind, 0));
        select coalesce(sum(l.amount), 0) into v_taken from rate_leases l
          where l.key_id = p_key and l.kind = p_kind and l.window_start = p_window
            and (l.holder = p_holder or l.expires_at > now());
        v_headroom := greatest(p_limit - v_taken, 0);
        if v_headroom < p_need then
          v_grant := 0;
        else
          v_grant := least(v_headroom, p_need + case when v_headroom - p_need >= 16 * greatest(p_need, 1) then (v_headroom - p_need) / 8 else 0 end);
        end if;
        v_expires := case when p_kind = 'concurrent' then now() + p_ttl_ms * interval '1 millisecond'
                          else greatest(now() + p_ttl_ms * interval '1 millisecond', to_timestamp((p_window + 1) * 60)) end;
        insert into rate_leases as l (key_id, kind, window_start, holder, amount, expires_at)
          values (p_key, p_kind, p_window, p_holder, v_grant, v_expires)
          on conflict (key_id, kind, window_start, holder)
          do update set amount = l.amount + excluded.amount, expires_at = greatest(l.expires_at, excluded.expires_at);
        return query select v_grant, v_headroom - v_grant;
      end $$;`);
  }

  override down(): void {
    this.addSql(`drop function if exists gateway_rate_grow(varchar, varchar, bigint, varchar, bigint, bigint, integer);`);
    this.addSql(`drop table if exists "rate_leases";`);
    this.addSql(`alter table "accounts" drop column "key_rate_limit";`);
    this.addSql(`alter table "api_keys" drop column "rate_limit";`);
  }
}
