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

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (msg) => {
      const set = this.handlers.get(msg.channel as Channel);
      if (!set) return;
      for (const handler of set) handler(msg.payload ?? '');
    });
    client.on('error', (error) => {
      this.logger.warn({ err: error.message }, 'change feed connection failed');
      this.scheduleReconnect(client);
    });
    client.on('end', () => this.scheduleReconnect(client));
    await client.connect();
    for (const channel of Object.values(CHANNELS)) await client.query(`listen ${channel}`);
    this.client = client;
  }

  private scheduleReconnect(failed: pg.Client, delayMs = 500): void {
    if (this.closed || this.client !== failed || this.retryTimer) return;
    this.client = undefined;
    // Anything could have changed while we were deaf.
    for (const handler of this.resetHandlers) handler();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect()
        .then(() => {
          for (const handler of this.resetHandlers) handler();
          this.logger.info('change feed reconnected');
        })
        .catch(() => {
          this.client = failed;
          this.scheduleReconnect(failed, Math.min(delayMs * 2, 10_000));
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
