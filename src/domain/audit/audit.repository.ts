// The audit_events table: appended inside the unit of work of the change it
// records, read back newest first. The database role cannot update or delete
// it (docs/architecture.md §14), so the repository has no such method.
import type { MikroORM } from '@mikro-orm/postgresql';
import { emOf } from '../pg-transactor';
import type { Tx } from '../transaction';
import { AuditEventSchema, type AuditChanges } from './audit-event.entity';

export interface AuditEventRecord {
  id: string;
  accountId: string;
  actorUserId: string | null;
  actor: string;
  action: string;
  apiKeyId: string | null;
  changes: AuditChanges;
  ip: string | null;
  createdAt: Date;
}

export interface AuditPageQuery {
  accountId: string;
  apiKeyId?: string;
  limit: number;
  offset: number;
}

export interface AuditRepository {
  /** Adds an event to the unit of work; it commits with the change it records. */
  append(tx: Tx, event: AuditEventRecord): void;
  /** One account's events, newest first (ties by id, newest first), and how many match. */
  page(query: AuditPageQuery): Promise<{ total: number; items: AuditEventRecord[] }>;
}

export class PgAuditRepository implements AuditRepository {
  constructor(private readonly orm: MikroORM) {}

  append(tx: Tx, event: AuditEventRecord): void {
    const { accountId, ...rest } = event;
    emOf(tx).create(AuditEventSchema, { ...rest, account: accountId });
  }

  async page(query: AuditPageQuery): Promise<{ total: number; items: AuditEventRecord[] }> {
    const where = { account: query.accountId, ...(query.apiKeyId ? { apiKeyId: query.apiKeyId } : {}) };
    const [rows, total] = await this.orm.em.fork().findAndCount(AuditEventSchema, where, {
      orderBy: { createdAt: 'desc', id: 'desc' },
      limit: query.limit,
      offset: query.offset,
    });
    return {
      total,
      items: rows.map((r) => ({
        id: r.id,
        accountId: query.accountId,
        actorUserId: r.actorUserId ?? null,
        actor: r.actor,
        action: r.action,
        apiKeyId: r.apiKeyId ?? null,
        changes: r.changes,
        ip: r.ip ?? null,
        createdAt: r.createdAt,
      })),
    };
  }
}
