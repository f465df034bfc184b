import { Migration } from '@mikro-orm/migrations';

export class Migration20261122132209 extends Migration {

  override name = 'Migration20261122132209';

  override up(): void | Promise<void> {
    this.addSql(`create table "accounts" ("id" varchar(40) not null, "name" varchar(128) not null, "timezone" varchar(64) not null, "currency" varchar(8) not null, "credit_limit_micros" bigint null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "accounts" add constraint "accounts_name_unique" unique ("name");`);

    this.addSql(`create table "api_keys" ("id" varchar(40) not null, "account_id" varchar(40) not null, "name" varchar(64) not null, "dimension" varchar(16) not null, "status" text not null, "model_scope" jsonb not null, "expires_at" date null, "secret_hash" varchar(64) not null, "secret_hint" varchar(32) not null, "used_tokens" bigint not null default '0', "last_used_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "cancelled_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_secret_hash_unique" unique ("secret_hash");`);
    this.addSql(`create index "api_keys_account_id_created_at_index" on "api_keys" ("account_id", "created_at");`);
    this.addSql(`create unique index "api_keys_live_name_unique" on "api_keys" ("account_id", "name") where status <> 'cancelled';`);

    this.addSql(`create table "audit_events" ("id" varchar(40) not null, "account_id" varchar(40) not null, "actor_user_id" varchar(40) null, "actor" varchar(254) not null, "action" varchar(64) not null, "api_key_id" varchar(40) null, "changes" jsonb not null, "ip" varchar(64) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "audit_events_account_id_created_at_index" on "audit_events" ("account_id", "created_at");`);

    this.addSql(`create table "console_users" ("id" varchar(40) not null, "account_id" varchar(40) not null, "email" varchar(254) not null, "password_hash" varchar(255) not null, "role" text not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "console_users" add constraint "console_users_email_unique" unique ("email");`);

    this.addSql(`create table "console_sessions" ("id" varchar(40) not null, "user_id" varchar(40) not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, "created_at" timestamptz not null, "ip" varchar(64) null, primary key ("id"));`);
    this.addSql(`alter table "console_sessions" add constraint "console_sessions_token_hash_unique" unique ("token_hash");`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_account_id_foreign" foreign key ("account_id") references "accounts" ("id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_status_check" check ("status" in ('active', 'suspended', 'cancelled'));`);

    this.addSql(`alter table "audit_events" add constraint "audit_events_account_id_foreign" foreign key ("account_id") references "accounts" ("id");`);

    this.addSql(`alter table "console_users" add constraint "console_users_account_id_foreign" foreign key ("account_id") references "accounts" ("id");`);
    this.addSql(`alter table "console_users" add constraint "console_users_role_check" check ("role" in ('owner', 'admin', 'viewer'));`);

    this.addSql(`alter table "console_sessions" add constraint "console_sessions_user_id_foreign" foreign key ("user_id") references "console_users" ("id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "api_keys" drop constraint "api_keys_account_id_foreign";`);
    this.addSql(`alter table "audit_events" drop constraint "audit_events_account_id_foreign";`);
    this.addSql(`alter table "console_users" drop constraint "console_users_account_id_foreign";`);
    this.addSql(`alter table "console_sessions" drop constraint "console_sessions_user_id_foreign";`);

    this.addSql(`drop table if exists "accounts" cascade;`);
    this.addSql(`drop table if exists "api_keys" cascade;`);
    this.addSql(`drop table if exists "audit_events" cascade;`);
    this.addSql(`drop table if exists "console_users" cascade;`);
    this.addSql(`drop table if exists "console_sessions" cascade;`);
  }

}
