// Every committed migration, in order. The gateway runs this list rather than
// globbing the folder, so it needs neither a TypeScript loader nor MikroORM's
// file-system helpers at run time; `npm run migration:create` writes new files
// here, and test/unit/db/migrations-list.test.ts fails until they are listed.
import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122132209 } from './Migration20261122132209';
import { Migration20261122135652 } from './Migration20261122135652';
import { Migration20261122140000_usage } from './Migration20261122140000_usage';
import { Migration20261124080000_requested_model } from './Migration20261124080000_requested_model';
import { Migration20261127125800_credit_leases } from './Migration20261127125800_credit_leases';
import { Migration20261128120000_usage_estimated } from './Migration20261128120000_usage_estimated';
import { Migration20261129100000_stored_responses } from './Migration20261129100000_stored_responses';
import { Migration20261129110000_audit_append_only } from './Migration20261129110000_audit_append_only';
import { Migration20261129120000_key_rotation } from './Migration20261129120000_key_rotation';
import { Migration20261129123100_rate_leases } from './Migration20261129123100_rate_leases';
import { Migration20261129130000_webhooks } from './Migration20261129130000_webhooks';

export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122132209', class: Migration20261122132209 },
  { name: 'Migration20261122135652', class: Migration20261122135652 },
  { name: 'Migration20261122140000_usage', class: Migration20261122140000_usage },
  { name: 'Migration20261124080000_requested_model', class: Migration20261124080000_requested_model },
  { name: 'Migration20261127125800_credit_leases', class: Migration20261127125800_credit_leases },
  { name: 'Migration20261128120000_usage_estimated', class: Migration20261128120000_usage_estimated },
  { name: 'Migration20261129100000_stored_responses', class: Migration20261129100000_stored_responses },
  { name: 'Migration20261129110000_audit_append_only', class: Migration20261129110000_audit_append_only },
  { name: 'Migration20261129120000_key_rotation', class: Migration20261129120000_key_rotation },
  { name: 'Migration20261129123100_rate_leases', class: Migration20261129123100_rate_leases },
  { name: 'Migration20261129130000_webhooks', class: Migration20261129130000_webhooks },
];
