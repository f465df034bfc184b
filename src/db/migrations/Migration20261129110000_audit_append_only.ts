import { Migration } from '@mikro-orm/migrations';

// The audit log is evidence (issue 28): the gateway's own database role must
// not be able to rewrite or erase it, so a leaked app connection or an SQL
// bug cannot hide what was done. Triggers hold whatever role connects (the
// app role usually owns the table, and an owner's privileges cannot be taken
// away for good); where the app role is not the owner, its UPDATE, DELETE and
// TRUNCATE privileges are revoked as well. Only a superuser or the owner,
// deliberately disabling the triggers, can change history.
export class Migration20261129110000_audit_append_only extends Migration {
  override name = 'Migration20261129110000_audit_append_only';

  override up(): void {
    this.addSql(`create or replace function gateway_audit_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'audit_events is append-only: % is not allowed', tg_op using errcode = 'insufficient_privilege';
      end
    $$;`);
    this.addSql(`create trigger "audit_events_no_update_delete" before update or delete on "audit_events"
      for each row execute function gateway_audit_append_only();`);
    this.addSql(`create trigger "audit_events_no_truncate" before truncate on "audit_events"
      for each statement execute function gateway_audit_append_only();`);
    this.addSql(`revoke update, delete, truncate on "audit_events" from public;`);
    this.addSql(`do $$
      begin
        if (select tableowner from pg_tables where schemaname = current_schema() and tablename = 'audit_events') <> current_user then
          execute format('revoke update, delete, truncate on audit_events from %I', current_user);
        end if;
      end
    $$;`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "audit_events_no_truncate" on "audit_events";`);
    this.addSql(`drop trigger if exists "audit_events_no_update_delete" on "audit_events";`);
    this.addSql(`drop function if exists gateway_audit_append_only();`);
  }
}
