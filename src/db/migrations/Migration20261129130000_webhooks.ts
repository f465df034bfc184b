import { Migration } from '@mikro-orm/migrations';

// Credit alerts and signed webhooks (issue 31). Events are written to the
// webhook_events outbox in the transaction of the change that causes them;
// a trigger fans each out to one delivery row per subscribed endpoint, so
// every writer (the usage statement, the key service, the sweeps) gets the
// same fan-out without a round trip of its own. Key state changes become
// events from their audit rows (same transaction, one place for every path,
// the operator CLI included).
export class Migration20261129130000_webhooks extends Migration {
  override name = 'Migration20261129130000_webhooks';

  override up(): void {
    this.addSql(`create table "account_credit_alerts" ("account_id" varchar(40) not null, "thresholds" jsonb not null, "updated_at" timestamptz not null, primary key ("account_id"));`);

    this.addSql(`create table "webhooks" ("id" varchar(40) not null, "account_id" varchar(40) not null, "url" varchar(2048) not null, "events" jsonb not null, "secret" varchar(80) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhooks_account_id_created_at_index" on "webhooks" ("account_id", "created_at");`);

    this.addSql(`create table "webhook_events" ("id" varchar(40) not null, "account_id" varchar(40) not null, "type" varchar(64) not null, "dedupe_key" varchar(200) null, "data" jsonb not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "webhook_events" add constraint "webhook_events_dedupe_key_unique" unique ("dedupe_key");`);
    this.addSql(`create index "webhook_events_type_created_at_index" on "webhook_events" ("type", "created_at");`);

    this.addSql(`create table "webhook_deliveries" ("id" varchar(40) not null, "event_id" varchar(40) not null, "webhook_id" varchar(40) not null, "state" text not null, "attempts" int not null default 0, "next_attempt_at" timestamptz null, "last_status_code" int null, "last_error" varchar(500) null, "delivered_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_state_next_attempt_at_index" on "webhook_deliveries" ("state", "next_attempt_at");`);
    this.addSql(`create index "webhook_deliveries_webhook_id_created_at_index" on "webhook_deliveries" ("webhook_id", "created_at");`);

    this.addSql(`alter table "account_credit_alerts" add constraint "account_credit_alerts_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhooks" add constraint "webhooks_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_events" add constraint "webhook_events_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "webhook_events" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_webhook_id_foreign" foreign key ("webhook_id") references "webhooks" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_state_check" check ("state" in ('pending', 'delivered', 'failed'));`);

    // Fan-out: each new event gets a pending delivery for every endpoint of its account subscribed to its type.
    this.addSql(`create or replace function gateway_webhook_fan_out() returns trigger language plpgsql as $$
      begin
        insert into webhook_deliveries (id, event_id, webhook_id, state, attempts, next_attempt_at, created_at)
        select 'whd_' || replace(gen_random_uuid()::text, '-', ''), new.id, w.id, 'pending', 0, new.created_at, new.created_at
        from webhooks w where w.account_id = new.account_id and w.events ? new.type;
        return null;
      end
    $$;`);
    this.addSql(`create trigger "webhook_events_fan_out" after insert on "webhook_events" for each row execute function gateway_webhook_fan_out();`);

    // Key state changes: the audit row of a suspend, resume or cancel becomes the event (an emergency
    // rotation's suspension of the old key and a grace period's automatic cancel included).
    this.addSql(`create or replace function gateway_key_event() returns trigger language plpgsql as $$
      begin
        insert into webhook_events (id, account_id, type, dedupe_key, data, created_at)
        select 'evt_' || replace(gen_random_uuid()::text, '-', ''), new.account_id,
          case new.action when 'key.resume' then 'key.resumed' when 'key.cancel' then 'key.cancelled' else 'key.suspended' end,
          null,
          jsonb_build_object('api_key_id', new.api_key_id, 'name', k.name, 'status', new.changes -> 'status' -> 'to', 'previous_status', new.changes -> 'status' -> 'from', 'actor', new.actor),
          new.created_at
        from api_keys k where k.id = new.api_key_id;
        return null;
      end
    $$;`);
    this.addSql(`create trigger "audit_events_key_event" after insert on "audit_events" for each row
      when (new.action in ('key.suspend', 'key.resume', 'key.cancel') or (new.action = 'key.rotate' and new.changes -> 'status' ->> 'to' = 'suspended'))
      execute function gateway_key_event();`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "audit_events_key_event" on "audit_events";`);
    this.addSql(`drop function if exists gateway_key_event();`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhook_events" cascade;`);
    this.addSql(`drop function if exists gateway_webhook_fan_out();`);
    this.addSql(`drop table if exists "webhooks" cascade;`);
    this.addSql(`drop table if exists "account_credit_alerts" cascade;`);
  }
}
