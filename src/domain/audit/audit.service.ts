import { newId } from '../../db/ids';
import type { Actor } from '../actor';
import type { Tx } from '../transaction';
import type { AuditChanges } from './audit-event.entity';
import type { AuditRepository } from './audit.repository';

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
  constructor(private readonly events: AuditRepository) {}

  /** Writes an audit event inside the caller's unit of work, so it commits or fails with the change. */
  record(tx: Tx, actor: Actor, action: string, apiKeyId: string | null, changes: AuditChanges): void {
    this.events.append(tx, {
      id: newId('aud'),
      accountId: actor.accountId,
      actorUserId: actor.userId,
      actor: actor.label,
      action,
      apiKeyId,
      changes,
      ip: actor.ip,
      createdAt: new Date(),
    });
  }

  /** The actor's account's events, newest first: another account's are never read. */
  async list(actor: Actor, query: AuditQuery): Promise<{ total: number; items: AuditEventView[] }> {
    const { total, items } = await this.events.page({
      accountId: actor.accountId,
      apiKeyId: query.apiKeyId,
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return { total, items: items.map(({ accountId: _account, ...view }) => view) };
  }
}
