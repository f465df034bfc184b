// Writes the cancellation of rotated-away keys whose grace has ended. Every
// process runs it: the update only takes keys not yet cancelled and skips
// rows another process is cancelling, so running it twice, or on every
// process at once, cancels each key once, with one audit event. Reading
// and admission do not wait for it: a key past `cancels_at` reads cancelled
// and is refused at once (key-status.ts); the sweep makes that stored, frees
// the name, and NOTIFYs so calls still streaming on the key are cut.
import { txOf } from '../pg-transactor';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { CHANNELS, notifyChange } from '../../db/change-feed';
import { inTransaction } from '../../db/transaction';
import type { Actor } from '../actor';
import type { AuditService } from '../audit/audit.service';

/** Keys cancelled per transaction; a larger backlog takes the next passes. */
const SWEEP_BATCH = 500;

/** Who the audit log names for a cancellation at the end of a rotation grace. */
export const ROTATION_ACTOR_LABEL = 'key-rotation';

interface DueKey {
  id: string;
  account_id: string;
  was: string;
}

export class KeyRotationSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly audit: AuditService,
    private readonly logger: Logger,
    /** Called after the cancellations commit, once per key (the process-local half of NOTIFY). */
    private readonly onCommitted: (keyId: string) => void = () => undefined,
  ) {}

  /** Sweeps now, then every `intervalMs` (GATEWAY_ROTATION_SWEEP_MS). */
  start(intervalMs: number): void {
    const tick = () => {
      this.run().catch((error: unknown) => this.logger.warn({ err: error }, 'rotation sweep failed; the next pass retries'));
    };
    tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  /** One pass (a pass already under way is joined, not doubled): the number of keys this process cancelled. */
  run(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    const due = await inTransaction(this.orm, async (em) => {
      const rows = await em.execute<DueKey[]>(
        `with due as (
           select id, account_id, status from api_keys
           where cancels_at <= now() and status <> 'cancelled'
           order by cancels_at limit ${SWEEP_BATCH}
           for update skip locked
         )
         update api_keys k set status = 'cancelled', cancelled_at = now(), updated_at = now()
         from due where k.id = due.id
         returning k.id, due.account_id, due.status as was`,
      );
      for (const row of rows) {
        const actor: Actor = { accountId: row.account_id, userId: null, label: ROTATION_ACTOR_LABEL, role: 'owner', ip: null };
        this.audit.record(txOf(em), actor, 'key.cancel', row.id, {
          status: { from: row.was, to: 'cancelled' },
          reason: { from: null, to: 'rotation_grace_ended' },
        });
        await notifyChange(em, CHANNELS.keys, row.id);
      }
      return rows;
    });
    for (const row of due) this.onCommitted(row.id);
    if (due.length > 0) this.logger.info({ keys: due.length }, 'rotation grace ended: old keys cancelled');
    return due.length;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }
}
