import { Migration } from '@mikro-orm/migrations';

// A call may name its model by an alias (docs/architecture.md §5); the record keeps that
// name beside the neutral model. Rows written before this migration were
// always requested by their neutral name, so that is their requested name.
export class Migration20261124080000_requested_model extends Migration {
  override name = 'Migration20261124080000_requested_model';

  override up(): void {
    this.addSql(`alter table "usage_records" add column "requested_model" varchar(200) null;`);
    this.addSql(`update "usage_records" set "requested_model" = "model" where "requested_model" is null;`);
  }

  override down(): void {
    this.addSql(`alter table "usage_records" drop column "requested_model";`);
  }
}
