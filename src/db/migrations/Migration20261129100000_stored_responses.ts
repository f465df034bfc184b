import { Migration } from '@mikro-orm/migrations';

// Stateful Responses (issue 29): stored responses, the index of their item
// ids for item_reference, and Conversations API conversations with their
// items. A usage record names the response it billed (REST/CSV response_id,
// GraphQL responseId). Conversation items are ordered by one sequence.

export class Migration20261129100000_stored_responses extends Migration {

  override name = 'Migration20261129100000_stored_responses';

  override up(): void | Promise<void> {
    this.addSql(`create table "conversations" ("id" varchar(80) not null, "account_id" varchar(40) not null, "metadata" jsonb not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "conversations_expires_at_index" on "conversations" ("expires_at");`);

    this.addSql(`create table "conversation_items" ("conversation_id" varchar(80) not null, "seq" bigint not null, "item_id" varchar(120) not null, "item" jsonb not null, primary key ("conversation_id", "seq"));`);
    this.addSql(`alter table "conversation_items" add constraint "conversation_items_conversation_id_item_id_unique" unique ("conversation_id", "item_id");`);

    this.addSql(`create table "stored_responses" ("id" varchar(80) not null, "account_id" varchar(40) not null, "api_key_id" varchar(40) not null, "request_id" varchar(40) not null, "previous_response_id" varchar(80) null, "conversation_id" varchar(80) null, "response" jsonb not null, "input" jsonb not null, "output" jsonb not null, "context_bytes" int not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "stored_responses_account_id_created_at_index" on "stored_responses" ("account_id", "created_at");`);
    this.addSql(`create index "stored_responses_expires_at_index" on "stored_responses" ("expires_at");`);

    this.addSql(`create table "stored_items" ("response_id" varchar(80) not null, "position" int not null, "in_output" boolean not null, "account_id" varchar(40) not null, "item_id" varchar(120) not null, primary key ("response_id", "position", "in_output"));`);
    this.addSql(`create index "stored_items_account_id_item_id_index" on "stored_items" ("account_id", "item_id");`);


    this.addSql(`alter table "conversations" add constraint "conversations_account_id_foreign" foreign key ("account_id") references "accounts" ("id");`);

    this.addSql(`alter table "conversation_items" add constraint "conversation_items_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on delete cascade;`);

    this.addSql(`alter table "stored_responses" add constraint "stored_responses_account_id_foreign" foreign key ("account_id") references "accounts" ("id");`);

    this.addSql(`alter table "stored_items" add constraint "stored_items_response_id_foreign" foreign key ("response_id") references "stored_responses" ("id") on delete cascade;`);
    this.addSql(`alter table "stored_items" add constraint "stored_items_account_id_foreign" foreign key ("account_id") references "accounts" ("id");`);

    this.addSql(`create sequence "conversation_items_seq";`);
    this.addSql(`alter table "usage_records" add column "response_id" varchar(80) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "usage_records" drop column "response_id";`);
    this.addSql(`drop sequence if exists "conversation_items_seq";`);
    this.addSql(`alter table "conversation_items" drop constraint "conversation_items_conversation_id_foreign";`);
    this.addSql(`alter table "stored_items" drop constraint "stored_items_response_id_foreign";`);

    this.addSql(`drop table if exists "conversations" cascade;`);
    this.addSql(`drop table if exists "conversation_items" cascade;`);
    this.addSql(`drop table if exists "stored_responses" cascade;`);
    this.addSql(`drop table if exists "stored_items" cascade;`);

  }

}
