// Items as the gateway keeps them (stored responses, conversations) and as
// it hands them back as context. Pure: no database.
import { randomBytes } from 'node:crypto';
import { invalid } from '../../errors';
import { isObject } from '../../core/json-edit';
import type { RawObject } from '../../core/canonical';

/**
 * Size bounds of what is kept. A response's expanded input (its stored
 * context and its own input) is at most the request body limit (20 MB), the
 * same bound a stateless caller has, and at most MAX_CONTEXT_ITEMS items;
 * its output is bounded by max_output_tokens. So one stored response holds
 * at most about 20 MB of input plus its output.
 */
export const MAX_CONTEXT_ITEMS = 10_000;
/** Items one Conversations API call may add (OpenAI's own bound is 20). */
export const MAX_ITEMS_PER_ADD = 1_000;
/** The longest item id a caller may give an item the gateway keeps (the gateway's own are at most 40). */
export const MAX_ITEM_ID_LENGTH = 120;

/**
 * The caller's own item ids, checked before anything is kept (or an upstream
 * called): at most MAX_ITEM_ID_LENGTH characters, and (`unique`) none twice,
 * nor one `taken` already. A 400 names `<list>[i].id`.
 */
export function checkItemIds(items: readonly unknown[], list: string, unique: { taken?: ReadonlySet<string> } | null): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (!isObject(item) || typeof item.id !== 'string' || item.type === 'item_reference') return;
    const field = `${list}[${i}].id`;
    if (item.id.length > MAX_ITEM_ID_LENGTH) throw invalid(field, `${field}: an item id is at most ${MAX_ITEM_ID_LENGTH} characters`);
    if (!unique) return;
    if (seen.has(item.id) || unique.taken?.has(item.id)) throw invalid(field, `${field}: the conversation already holds an item with id '${item.id}'`, 'duplicate_item_id');
    seen.add(item.id);
  });
}

/** `<prefix>_` and `bytes` random bytes in hex: ids a caller of another account cannot guess. */
export function randomId(prefix: string, bytes = 24): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}

const ID_PREFIX: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
  reasoning: 'rs',
};

/**
 * One input item as kept: an explicit `type`, message content as a list of
 * parts (OpenAI's own stored shape, which the Agents SDK's conversation
 * session reads), and an id (the caller's, else a new one).
 */
export function keptItem(item: unknown): RawObject {
  const value: RawObject = isObject(item) ? item : { type: 'message', role: 'user', content: String(item) };
  const type = typeof value.type === 'string' ? value.type : 'message';
  let kept: RawObject = value.type === type ? { ...value } : { type, ...value };
  if (type === 'message') {
    const assistant = kept.role === 'assistant';
    if (typeof kept.content === 'string') {
      kept.content = [assistant ? { type: 'output_text', text: kept.content, annotations: [] } : { type: 'input_text', text: kept.content }];
    }
    kept = { ...kept, status: typeof kept.status === 'string' ? kept.status : 'completed' };
  }
  if (typeof kept.id !== 'string' || kept.id === '') kept.id = randomId(ID_PREFIX[type] ?? 'item', 16);
  return kept;
}

/** A Responses `input` (one text or a list of items) as a list of items. */
export function inputItems(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}

/**
 * A kept item as context for an upstream: the ids the gateway gave the
 * caller's messages and tool outputs mean nothing upstream (a Responses
 * upstream given `store: false` would look them up), so they go; output
 * items keep theirs (reasoning and function calls are matched by them).
 */
export function contextItem(item: unknown): unknown {
  if (!isObject(item)) return item;
  const type = item.type ?? 'message';
  if (type === 'reasoning') return item;
  if (type !== 'message' && type !== 'function_call_output' && type !== 'custom_tool_call_output') return item;
  const { id: _id, status: _status, ...rest } = item;
  return rest;
}

/** A lone surrogate escape or NUL in JSON text: jsonb refuses both. */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i;
const UNPAIRED = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\u0000/g;

/**
 * JSON text PostgreSQL's jsonb takes: a NUL or half a surrogate pair in a
 * string (which a caller's JSON may hold, and an upstream then read) becomes
 * U+FFFD. Only text that has one pays for the second pass.
 */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  if (!UNSTORABLE_ESCAPE.test(text)) return text;
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? v.replace(UNPAIRED, '\ufffd') : v));
}

/**
 * Whether a kept item can go back upstream: reasoning only with its
 * encrypted content (a Responses upstream called with `store: false` looks
 * up a bare reasoning id and fails; other protocols need the signature).
 */
export function replayable(item: unknown): boolean {
  return !isObject(item) || item.type !== 'reasoning' || (typeof item.encrypted_content === 'string' && item.encrypted_content !== '');
}

/** Byte length of the JSON of `value` (what it adds to a request body). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface ListQuery {
  limit: number;
  order: 'asc' | 'desc';
  /** An item id: the page starts after it. */
  after?: string;
}

/** One page of `items` (oldest first) by the list endpoints' cursor rules; an unknown `after` gives an empty page. */
export function listPage<T extends RawObject>(items: readonly T[], query: ListQuery): ListPage<T> {
  const ordered = query.order === 'asc' ? items : items.slice().reverse();
  let start = 0;
  if (query.after !== undefined) {
    const at = ordered.findIndex((item) => item.id === query.after);
    start = at < 0 ? ordered.length : at + 1;
  }
  const data = ordered.slice(start, start + query.limit);
  return {
    object: 'list',
    data,
    first_id: data.length > 0 ? String(data[0]!.id) : null,
    last_id: data.length > 0 ? String(data[data.length - 1]!.id) : null,
    has_more: start + data.length < ordered.length,
  };
}
