import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';

// Cross-process invalidation through PostgreSQL LISTEN/NOTIFY. Writers notify
// inside their transaction, so listeners hear of a change only once it is
// committed; every gateway process (and cluster worker) listens.

export const CHANNELS = {
  /** payload: api key id */
  keys: 'gateway_keys',
  /** payload: account id (credit limit, zone, guardrail policy, month-to-date crossing) */
  accounts: 'gateway_accounts',
} as const;
export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

export async function notifyChange(em: EntityManager, channel: Channel, payload: string): Promise<void> {
  await em.execute('select pg_notify(?, ?)', [channel, payload]);
}

type Handler = (payload: string) => void;

// Reconnection back-off: quick at first, then every two seconds while the database is away.
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 2_000;

/**
 * One dedicated connection per process that LISTENs on every channel and
 * reconnects with back-off. While disconnected, `onReset` handlers run on
 * reconnect so caches drop everything they might have missed.
 */
export class ChangeFeed {
  private client: pg.Client | undefined;
  private readonly handlers = new Map<Channel, Set<Handler>>();
  private readonly resetHandlers = new Set<() => void>();
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
  ) {}

  on(channel: Channel, handler: Handler): void {
    let set = this.handlers.get(channel);
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
  }

  onReset(handler: () => void): void {
    this.resetHandlers.add(handler);
  }

  /**
   * Runs this process's handlers now, without waiting for the NOTIFY round
   * trip: the writer's own caches are current before its reply leaves, so a
   * client that suspends a key and calls at once is refused even on the same
   * process. Other processes still learn through NOTIFY.
   */
  emitLocal(channel: Channel, payload: string): void {
    for (const handler of this.handlers.get(channel) ?? []) handler(payload);
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    // keepAlive: a silently dropped connection (no FIN) is noticed, not listened on forever.
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: 5_000 });
    client.on('notification', (msg) => this.emitLocal(msg.channel as Channel, msg.payload ?? ''));
    let lost = false;
    client.on('error', (error) => {
      lost = true;
      this.logger.warn({ err: error.message }, 'change feed connection failed');
      this.scheduleReconnect(client);
    });
    client.on('end', () => {
      lost = true;
      this.scheduleReconnect(client);
    });
    try {
      await client.connect();
      for (const channel of Object.values(CHANNELS)) await client.query(`listen ${channel}`);
      // Lost before it became the live connection: nobody would notice, so count it as a failed attempt.
      if (lost) throw new Error('change feed connection lost while starting');
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  /** The live connection failed: forget everything cached, then retry with back-off until it is back. */
  private scheduleReconnect(failed: pg.Client): void {
    if (this.closed || this.client !== failed) return;
    this.client = undefined;
    // Anything could have changed while we were deaf.
    for (const handler of this.resetHandlers) handler();
    this.retry(RETRY_FIRST_MS);
  }

  private retry(delayMs: number): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.closed) return;
      this.connect()
        .then(() => {
          if (!this.client) return;
          for (const handler of this.resetHandlers) handler();
          this.logger.info('change feed reconnected');
        })
        .catch((error: unknown) => {
          this.logger.debug({ err: error instanceof Error ? error.message : String(error) }, 'change feed still disconnected');
          this.retry(Math.min(delayMs * 2, RETRY_MAX_MS));
        });
    }, delayMs);
    this.retryTimer.unref();
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
