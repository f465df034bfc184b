import { Migration } from '@mikro-orm/migrations';

// Key rotation (issue 31): a key links to its predecessor and successor, and a
// rotated-away key carries the end of its grace. While the grace runs both
// keys are live under one name, so the live-name index skips rotated-away keys.
export class Migration20261129120000_key_rotation extends Migration {
  override name = 'Migration20261129120000_key_rotation';

  override up(): void {
    this.addSql(`drop index "api_keys_live_name_unique";`);
    this.addSql(`alter table "api_keys" add "rotated_from" varchar(40) null, add "rotated_to" varchar(40) null, add "cancels_at" timestamptz null;`);
    this.addSql(`create index "api_keys_grace_running" on "api_keys" ("cancels_at") where cancels_at is not null and status <> 'cancelled';`);
    this.addSql(`create unique index "api_keys_live_name_unique" on "api_keys" ("account_id", "name") where status <> 'cancelled' and rotated_to is null;`);
  }

  override down(): void {
    this.addSql(`drop index "api_keys_grace_running";`);
    this.addSql(`drop index "api_keys_live_name_unique";`);
    this.addSql(`alter table "api_keys" drop column "rotated_from", drop column "rotated_to", drop column "cancels_at";`);
    this.addSql(`create unique index "api_keys_live_name_unique" on "api_keys" ("account_id", "name") where status <> 'cancelled';`);
  }
}
