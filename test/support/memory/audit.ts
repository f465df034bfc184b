import type { AuditEventRecord, AuditPageQuery, AuditRepository } from '../../../src/domain/audit/audit.repository';
import type { Tx } from '../../../src/domain/transaction';
import { MemoryRows } from './transactor';

/** audit_events in memory: appended in the unit of work (rolled back with it), read newest first. */
export class MemoryAuditRepository extends MemoryRows<AuditEventRecord> implements AuditRepository {
  append(_tx: Tx, event: AuditEventRecord): void {
    this.rows.set(event.id, structuredClone(event));
  }

  async page(query: AuditPageQuery): Promise<{ total: number; items: AuditEventRecord[] }> {
    const matching = this.all()
      .filter((e) => e.accountId === query.accountId && (!query.apiKeyId || e.apiKeyId === query.apiKeyId))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return { total: matching.length, items: matching.slice(query.offset, query.offset + query.limit).map((e) => structuredClone(e)) };
  }

  /** Events of one action, oldest first (for assertions). */
  of(action: string): AuditEventRecord[] {
    return this.all().filter((e) => e.action === action);
  }
}
