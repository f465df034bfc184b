// Conversations API conversations: an account's ordered item lists, which
// `conversation` on /v1/responses reads as context and appends to. Plain SQL;
// every statement filters by the caller's account. Retention counts from a
// conversation's last write.
import { appError } from '../../errors';
import type pg from 'pg';
import type { RawObject } from '../../core/canonical';
import { checkItemIds, keptItem, listPage, randomId, storableJson, type ListPage, type ListQuery } from './stored-items';

export interface ConversationObject {
  id: string;
  object: 'conversation';
  created_at: number;
  metadata: Record<string, string>;
}

interface ConversationRow {
  id: string;
  metadata: Record<string, string>;
  created_at: Date;
}

const toObject = (row: ConversationRow): ConversationObject => ({
  id: row.id,
  object: 'conversation',
  created_at: Math.floor(row.created_at.getTime() / 1000),
  metadata: row.metadata,
});

/** OpenAI's answer to an id it does not know (or that belongs to someone else). */
export const conversationNotFound = (id: string) => appError('conversationNotFound', id);

export class ConversationStore {
  /** Appends under way in this process, by conversation: a read of the conversation waits for them. */
  private readonly appending = new Map<string, Promise<unknown>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly retentionDays: number,
  ) {}

  async create(accountId: string, metadata: Record<string, string>, items: readonly unknown[]): Promise<ConversationObject> {
    checkItemIds(items, 'items', {});
    const id = randomId('conv');
    const result = await this.pool.query<ConversationRow>(
      `insert into conversations (id, account_id, metadata, created_at, expires_at) values ($1, $2, $3, now(), now() + $4 * interval '1 day')
       returning id, metadata, created_at`,
      [id, accountId, JSON.stringify(metadata), this.retentionDays],
    );
    if (items.length > 0) await this.insertItems(id, items.map(keptItem));
    return toObject(result.rows[0]!);
  }

  async get(accountId: string, id: string): Promise<ConversationObject> {
    const result = await this.pool.query<ConversationRow>('select id, metadata, created_at from conversations where id = $1 and account_id = $2 and expires_at > now()', [id, accountId]);
    const row = result.rows[0];
    if (!row) throw conversationNotFound(id);
    return toObject(row);
  }

  async update(accountId: string, id: string, metadata: Record<string, string>): Promise<ConversationObject> {
    const result = await this.pool.query<ConversationRow>(
      `update conversations set metadata = $3, expires_at = now() + $4 * interval '1 day'
        where id = $1 and account_id = $2 and expires_at > now() returning id, metadata, created_at`,
      [id, accountId, JSON.stringify(metadata), this.retentionDays],
    );
    const row = result.rows[0];
    if (!row) throw conversationNotFound(id);
    return toObject(row);
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.appending.get(id);
    const result = await this.pool.query('delete from conversations where id = $1 and account_id = $2 and expires_at > now()', [id, accountId]);
    if ((result.rowCount ?? 0) === 0) throw conversationNotFound(id);
  }

  /** Every item, oldest first (404 for an unknown conversation). */
  async items(accountId: string, id: string): Promise<RawObject[]> {
    await this.appending.get(id);
    const result = await this.pool.query<{ item: RawObject | null }>(
      `select i.item from conversations c left join conversation_items i on i.conversation_id = c.id
        where c.id = $1 and c.account_id = $2 and c.expires_at > now() order by i.seq`,
      [id, accountId],
    );
    if (result.rows.length === 0) throw conversationNotFound(id);
    return result.rows.flatMap((row) => (row.item ? [row.item] : []));
  }

  async listItems(accountId: string, id: string, query: ListQuery): Promise<ListPage<RawObject>> {
    return listPage(await this.items(accountId, id), query);
  }

  async item(accountId: string, id: string, itemId: string): Promise<RawObject> {
    await this.appending.get(id);
    await this.get(accountId, id);
    const result = await this.pool.query<{ item: RawObject }>('select item from conversation_items where conversation_id = $1 and item_id = $2', [id, itemId]);
    const row = result.rows[0];
    if (!row) throw appError('itemNotFound', itemId);
    return row.item;
  }

  async deleteItem(accountId: string, id: string, itemId: string): Promise<ConversationObject> {
    await this.appending.get(id);
    const conversation = await this.get(accountId, id);
    const result = await this.pool.query('delete from conversation_items where conversation_id = $1 and item_id = $2', [id, itemId]);
    if ((result.rowCount ?? 0) === 0) throw appError('itemNotFound', itemId);
    return conversation;
  }

  /** Adds items at the end (404 for an unknown conversation); returns them as kept. */
  /** The Conversations API's add: an item id given twice, or one the conversation holds, is a 400 (nothing is added). */
  async addItems(accountId: string, id: string, items: readonly unknown[]): Promise<RawObject[]> {
    await this.appending.get(id);
    await this.get(accountId, id);
    checkItemIds(items, 'items', { taken: await this.takenIds(id, items) });
    return this.add(accountId, id, items);
  }

  private async add(accountId: string, id: string, items: readonly unknown[]): Promise<RawObject[]> {
    const touched = await this.pool.query(
      `update conversations set expires_at = now() + $3 * interval '1 day' where id = $1 and account_id = $2 and expires_at > now()`,
      [id, accountId, this.retentionDays],
    );
    if ((touched.rowCount ?? 0) === 0) throw conversationNotFound(id);
    const kept = items.map(keptItem);
    await this.insertItems(id, kept);
    return kept;
  }

  /** The ids among `items` the conversation already holds. */
  private async takenIds(id: string, items: readonly unknown[]): Promise<Set<string>> {
    const ids = items.flatMap((item) => (item && typeof item === 'object' && typeof (item as RawObject).id === 'string' ? [(item as RawObject).id as string] : []));
    if (ids.length === 0) return new Set();
    const result = await this.pool.query<{ item_id: string }>('select item_id from conversation_items where conversation_id = $1 and item_id = any($2::text[])', [id, ids]);
    return new Set(result.rows.map((row) => row.item_id));
  }

  /**
   * A response's input and output, appended after the reply: the next call
   * naming the conversation in this process waits for it. Failures are the
   * caller's to log.
   */
  append(accountId: string, id: string, items: readonly unknown[]): Promise<unknown> {
    const previous = this.appending.get(id) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.add(accountId, id, items));
    this.appending.set(id, next);
    void next.finally(() => {
      if (this.appending.get(id) === next) this.appending.delete(id);
    }).catch(() => undefined);
    return next;
  }

  private async insertItems(id: string, items: readonly RawObject[]): Promise<void> {
    // Item ids are unique within a conversation: a response's input naming an item the conversation holds (replayed reasoning) leaves it where it was.
    await this.pool.query(
      `insert into conversation_items (conversation_id, seq, item_id, item)
       select $1, nextval('conversation_items_seq'), x.value ->> 'id', x.value from jsonb_array_elements($2::jsonb) as x(value)
       on conflict (conversation_id, item_id) do nothing`,
      [id, storableJson(items)],
    );
  }
}
