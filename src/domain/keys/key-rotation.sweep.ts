// Writes the cancellation of rotated-away keys whose grace has ended. Every
// process runs it: the update only takes keys not yet cancelled and skips
// rows another process is cancelling, so running it twice, or on every
// process at once, cancels each key once, with one audit event. Reading
// and admission do not wait for it: a key past `cancels_at` reads cancelled
// and is refused at once (key-status.ts); the sweep makes that stored, frees
// the name, and NOTIFYs so calls still streaming on the key are cut.
import type { Logger } from 'pino';
import { CHANNELS } from '../../db/change-feed';
import type { Actor } from '../actor';
import type { AuditService } from '../audit/audit.service';
import type { Transactor } from '../transaction';
import type { ApiKeyRepository } from './api-key.repository';

/** Keys cancelled per transaction; a larger backlog takes the next passes. */
const SWEEP_BATCH = 500;

/** Who the audit log names for a cancellation at the end of a rotation grace. */
export const ROTATION_ACTOR_LABEL = 'key-rotation';

export class KeyRotationSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly transactor: Transactor,
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
    const due = await this.transactor.run(async (tx) => {
      const rows = await this.keys.cancelGraceEnded(tx, SWEEP_BATCH);
      for (const row of rows) {
        const actor: Actor = { accountId: row.accountId, userId: null, label: ROTATION_ACTOR_LABEL, role: 'owner', ip: null };
        this.audit.record(tx, actor, 'key.cancel', row.id, {
          status: { from: row.was, to: 'cancelled' },
          reason: { from: null, to: 'rotation_grace_ended' },
        });
        await tx.notify(CHANNELS.keys, row.id);
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
