import { Migration } from '@mikro-orm/migrations';

export class Migration20261122135652 extends Migration {

  override name = 'Migration20261122135652';

  override up(): void | Promise<void> {
    this.addSql(`create table "account_guardrail_policies" ("id" varchar(40) not null, "account_id" varchar(40) not null, "rule" varchar(64) not null, "policy" text not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "account_guardrail_policies" add constraint "account_guardrail_policies_account_rule_unique" unique ("account_id", "rule");`);

    this.addSql(`alter table "account_guardrail_policies" add constraint "account_guardrail_policies_account_id_foreign" foreign key ("account_id") references "accounts" ("id");`);
    this.addSql(`alter table "account_guardrail_policies" add constraint "account_guardrail_policies_policy_check" check ("policy" in ('block', 'redact', 'flag', 'off'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "account_guardrail_policies" cascade;`);
  }

}
