// Stored Responses-form responses (OpenAI's `store`, on by default), in
// plain SQL on the hot-path pool. Every read and delete filters by the
// caller's account: another account's id is as unknown as one never made.
// A write runs beside the usage record's commit, with synchronous_commit
// off, and the reply's last bytes wait for it: a follow-up on any instance
// finds the response. One in this process that names a response still
// being written (a client that read the id early from a stream) waits for
// that write rather than missing it.
import type pg from 'pg';
import type { Logger } from 'pino';
import type { RawObject } from '../../core/canonical';
import { listPage, storableJson, type ListPage, type ListQuery } from './stored-items';

export interface StoredResponseInput {
  id: string;
  accountId: string;
  apiKeyId: string;
  requestId: string;
  previousResponseId: string | null;
  conversationId: string | null;
  /** The Response object as the client received it. */
  response: RawObject;
  /** The whole input the upstream read, as kept items. */
  input: RawObject[];
  /** Index in `input` of the first item the call itself added (before it: stored context). */
  ownFrom: number;
  /** The output items as context (encrypted reasoning as the upstream returned it). */
  output: RawObject[];
}

export interface StoredContext {
  /** Input then output items. */
  items: unknown[];
  bytes: number;
}

/** Rows deleted per statement by the purges: short transactions, no long lock on a busy table. */
const PURGE_BATCH = 1_000;
const HOUR_MS = 3_600_000;

export class ResponseStore {
  /** Writes under way in this process, by response id and by account (item references). */
  private readonly writing = new Map<string, Promise<void>>();
  private readonly writingByAccount = new Map<string, Set<Promise<void>>>();
  private timer: NodeJS.Timeout | undefined;
  private purging: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: { retentionDays: number; logger: Logger },
  ) {}

  /** Purges expired rows now and then hourly (every process does; a batch that finds nothing costs one index probe). */
  start(): void {
    const run = () => {
      this.purging = this.purgeExpired().catch((error: unknown) => this.options.logger.error({ err: error }, 'could not purge expired stored responses'));
    };
    run();
    this.timer = setInterval(run, HOUR_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.purging;
    await Promise.allSettled([...this.writing.values()]);
  }

  /** Keeps a response; resolves when it is written (failures are logged, never thrown: the client has its reply). */
  save(record: StoredResponseInput): Promise<void> {
    const write = this.write(record).catch((error: unknown) =>
      this.options.logger.error({ err: error, request_id: record.requestId, response_id: record.id }, 'could not store a response'),
    );
    this.writing.set(record.id, write);
    let pending = this.writingByAccount.get(record.accountId);
    if (!pending) this.writingByAccount.set(record.accountId, (pending = new Set()));
    pending.add(write);
    void write.finally(() => {
      this.writing.delete(record.id);
      pending.delete(write);
      if (pending.size === 0) this.writingByAccount.delete(record.accountId);
    });
    return write;
  }

  private async write(r: StoredResponseInput): Promise<void> {
    const input = storableJson(r.input);
    const output = storableJson(r.output);
    const located: { position: number; in_output: boolean; item_id: string }[] = [];
    for (let i = r.ownFrom; i < r.input.length; i++) if (typeof r.input[i]!.id === 'string') located.push({ position: i, in_output: false, item_id: String(r.input[i]!.id) });
    r.output.forEach((item, i) => {
      if (typeof item.id === 'string') located.push({ position: i, in_output: true, item_id: item.id });
    });
    const client = await this.pool.connect();
    try {
      // Losing the last moments of stored responses to a server crash is acceptable; delaying the next call for a WAL flush is not.
      await client.query('begin; set local synchronous_commit = off');
      await client.query(
        `insert into stored_responses (id, account_id, api_key_id, request_id, previous_response_id, conversation_id, response, input, output, context_bytes, created_at, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), now() + $11 * interval '1 day')`,
        [r.id, r.accountId, r.apiKeyId, r.requestId, r.previousResponseId, r.conversationId, storableJson(r.response), input, output, Buffer.byteLength(input) + Buffer.byteLength(output), this.options.retentionDays],
      );
      if (located.length > 0) {
        await client.query(
          `insert into stored_items (response_id, position, in_output, account_id, item_id)
           select $1, x.position, x.in_output, $2, x.item_id from jsonb_to_recordset($3::jsonb) as x(position int, in_output boolean, item_id text)`,
          [r.id, r.accountId, storableJson(located)],
        );
      }
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  private async settled(id: string): Promise<void> {
    await this.writing.get(id);
  }

  /** The Response object, or null (unknown, expired, deleted, or another account's). */
  async get(accountId: string, id: string): Promise<RawObject | null> {
    await this.settled(id);
    const result = await this.pool.query<{ response: RawObject }>('select response from stored_responses where id = $1 and account_id = $2 and expires_at > now()', [id, accountId]);
    return result.rows[0]?.response ?? null;
  }

  /** A response's input then output items, as a follow-up's context, or null. */
  async context(accountId: string, id: string): Promise<StoredContext | null> {
    await this.settled(id);
    const result = await this.pool.query<{ input: unknown[]; output: unknown[]; context_bytes: number }>(
      'select input, output, context_bytes from stored_responses where id = $1 and account_id = $2 and expires_at > now()',
      [id, accountId],
    );
    const row = result.rows[0];
    if (!row) return null;
    const items = row.input;
    for (const item of row.output) items.push(item);
    return { items, bytes: row.context_bytes };
  }

  async inputItems(accountId: string, id: string, query: ListQuery): Promise<ListPage<RawObject> | null> {
    await this.settled(id);
    const result = await this.pool.query<{ input: RawObject[] }>('select input from stored_responses where id = $1 and account_id = $2 and expires_at > now()', [id, accountId]);
    const row = result.rows[0];
    return row ? listPage(row.input, query) : null;
  }

  /** Stored items by id (the newest response holding each), for item_reference. */
  async items(accountId: string, ids: readonly string[]): Promise<Map<string, RawObject>> {
    const pending = this.writingByAccount.get(accountId);
    if (pending) await Promise.all(pending);
    const result = await this.pool.query<{ item_id: string; item: RawObject }>(
      `select distinct on (i.item_id) i.item_id, case when i.in_output then r.output -> i.position else r.input -> i.position end as item
         from stored_items i join stored_responses r on r.id = i.response_id
        where i.account_id = $1 and i.item_id = any($2::text[]) and r.account_id = $1 and r.expires_at > now()
        order by i.item_id, r.created_at desc`,
      [accountId, ids],
    );
    return new Map(result.rows.map((row) => [row.item_id, row.item]));
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    await this.settled(id);
    const result = await this.pool.query('delete from stored_responses where id = $1 and account_id = $2', [id, accountId]);
    return (result.rowCount ?? 0) > 0;
  }

  /** Deletes expired responses batch-wise; returns how many. */
  async purgeExpired(): Promise<number> {
    let total = await this.purge(`select id from stored_responses where expires_at <= now() limit ${PURGE_BATCH}`, [], 'stored_responses');
    total += await this.purge(`select id from conversations where expires_at <= now() limit ${PURGE_BATCH}`, [], 'conversations');
    if (total > 0) this.options.logger.info({ deleted: total }, 'purged expired stored responses and conversations');
    return total;
  }

  /** Deletes every stored response and conversation of an account (an owner's purge); returns how many. */
  async purgeAccount(accountId: string): Promise<number> {
    await Promise.all(this.writingByAccount.get(accountId) ?? []);
    const responses = await this.purge(`select id from stored_responses where account_id = $1 limit ${PURGE_BATCH}`, [accountId], 'stored_responses');
    const conversations = await this.purge(`select id from conversations where account_id = $1 limit ${PURGE_BATCH}`, [accountId], 'conversations');
    return responses + conversations;
  }

  private async purge(select: string, params: unknown[], table: 'stored_responses' | 'conversations'): Promise<number> {
    let total = 0;
    for (;;) {
      const result = await this.pool.query(`delete from ${table} where id in (${select})`, params);
      const deleted = result.rowCount ?? 0;
      total += deleted;
      if (deleted < PURGE_BATCH) return total;
    }
  }
}
