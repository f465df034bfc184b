import type { EntityManager } from '@mikro-orm/postgresql';
import type { MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../../db/ids';
import { AuditEventSchema, type AuditChanges } from '../../db/entities/audit-event.entity';
import type { Actor } from '../actor';

export interface AuditEventView {
  id: string;
  actor: string;
  actorUserId: string | null;
  action: string;
  apiKeyId: string | null;
  changes: AuditChanges;
  ip: string | null;
  createdAt: Date;
}

export interface AuditQuery {
  apiKeyId?: string;
  page: number;
  pageSize: number;
}

export class AuditService {
  constructor(private readonly orm: MikroORM) {}

  /** Writes an audit event inside the caller's transaction, so it commits or fails with the change. */
  record(em: EntityManager, actor: Actor, action: string, apiKeyId: string | null, changes: AuditChanges): void {
    em.create(AuditEventSchema, {
      id: newId('aud'),
      account: actor.accountId,
      actorUserId: actor.userId,
      actor: actor.label,
      action,
      apiKeyId,
      changes,
      ip: actor.ip,
      createdAt: new Date(),
    });
  }

  async list(actor: Actor, query: AuditQuery): Promise<{ total: number; items: AuditEventView[] }> {
    const em = this.orm.em.fork();
    const where = { account: actor.accountId, ...(query.apiKeyId ? { apiKeyId: query.apiKeyId } : {}) };
    const [rows, total] = await em.findAndCount(AuditEventSchema, where, {
      orderBy: { createdAt: 'desc', id: 'desc' },
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return {
      total,
      items: rows.map((r) => ({
        id: r.id,
        actor: r.actor,
        actorUserId: r.actorUserId ?? null,
        action: r.action,
        apiKeyId: r.apiKeyId ?? null,
        changes: r.changes,
        ip: r.ip ?? null,
        createdAt: r.createdAt,
      })),
    };
  }
}
