import { Migration } from '@mikro-orm/migrations';

// A usage record says when some of its figures are the gateway's local count
// rather than the upstream's report (an abort before the upstream's usage
// arrived, or a server that reports none; docs/architecture.md §10). Rows written before
// were billed from upstream figures only (or were 0), so they are not
// estimated. A constant default adds the column without rewriting a row.
export class Migration20261128120000_usage_estimated extends Migration {
  override name = 'Migration20261128120000_usage_estimated';

  override up(): void {
    this.addSql(`alter table "usage_records" add column "estimated" boolean not null default false;`);
  }

  override down(): void {
    this.addSql(`alter table "usage_records" drop column "estimated";`);
  }
}
