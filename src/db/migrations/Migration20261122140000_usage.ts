import { Migration } from '@mikro-orm/migrations';

// Usage records are written in plain SQL on the hot path and partitioned by
// month, which entity metadata cannot express; these tables are excluded from
// the entity schema diff (SQL_MANAGED_TABLES in src/db/orm.ts).
export class Migration20261122140000_usage extends Migration {
  override name = 'Migration20261122140000_usage';

  override up(): void {
    this.addSql(`create table "usage_records" (
      "id" varchar(40) not null,
      "request_id" varchar(40) not null,
      "account_id" varchar(40) not null,
      "api_key_id" varchar(40) not null,
      "form" varchar(24) not null,
      "model" varchar(128) not null,
      "routed_model" varchar(128) null,
      "provider" varchar(64) null,
      "route_tier" varchar(16) null,
      "route_score" real null,
      "route_reasons" jsonb not null default '[]',
      "thinking" boolean not null,
      "stream" boolean not null,
      "status" varchar(24) not null,
      "error_code" varchar(64) null,
      "price_tier" varchar(16) not null,
      "raw_input_cache_hit" integer not null,
      "raw_input_cache_miss" integer not null,
      "raw_output" integer not null,
      "tokens_input_cache_hit" bigint not null,
      "tokens_input_cache_miss" bigint not null,
      "tokens_output" bigint not null,
      "amount_input_cache_hit" bigint not null,
      "amount_input_cache_miss" bigint not null,
      "amount_output" bigint not null,
      "total_tokens" bigint not null,
      "amount_micros" bigint not null,
      "guardrail_hits" jsonb not null default '{}',
      "latency_ms" integer not null,
      "ttft_ms" integer null,
      "created_at" timestamptz not null,
      primary key ("created_at", "id")
    ) partition by range ("created_at");`);
    this.addSql(`create table "usage_records_default" partition of "usage_records" default;`);
    this.addSql(`create index "usage_records_account_created_idx" on "usage_records" ("account_id", "created_at");`);
    this.addSql(`create index "usage_records_key_created_idx" on "usage_records" ("api_key_id", "created_at");`);
    this.addSql(`create index "usage_records_request_idx" on "usage_records" ("request_id");`);

    this.addSql(`create table "account_month_usage" (
      "account_id" varchar(40) not null references "accounts" ("id"),
      "month" char(7) not null,
      "amount_micros" bigint not null default 0,
      primary key ("account_id", "month")
    );`);

    this.addSql(`create table "settlement_closures" (
      "account_id" varchar(40) not null references "accounts" ("id"),
      "month" char(7) not null,
      "closed_at" timestamptz not null,
      "statement" jsonb not null,
      primary key ("account_id", "month")
    );`);

    // Monthly partitions are created ahead at start-up (ensureUsagePartitions);
    // the default partition catches anything outside them so no row is refused.
    this.addSql(`create or replace function gateway_ensure_usage_partition(month_start date) returns void
      language plpgsql as $$
      declare
        part text := 'usage_records_' || to_char(month_start, 'YYYY_MM');
        lo timestamptz := month_start::timestamp at time zone 'UTC';
        hi timestamptz := (month_start + interval '1 month')::timestamp at time zone 'UTC';
      begin
        if to_regclass(part) is null then
          execute format('create table %I (like usage_records including defaults)', part);
          -- rows already in the default partition for this range move over
          execute format('insert into %I select * from usage_records_default where created_at >= %L and created_at < %L', part, lo, hi);
          execute format('delete from usage_records_default where created_at >= %L and created_at < %L', lo, hi);
          execute format('alter table usage_records attach partition %I for values from (%L) to (%L)', part, lo, hi);
        end if;
      end $$;`);
  }

  override down(): void {
    this.addSql('drop function if exists gateway_ensure_usage_partition(date);');
    this.addSql('drop table if exists "settlement_closures";');
    this.addSql('drop table if exists "account_month_usage";');
    this.addSql('drop table if exists "usage_records" cascade;');
  }
}
