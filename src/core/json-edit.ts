// Copy-on-write edits of a JSON body: an edit returns the very object or
// array it was given when nothing changed, so an untouched body costs no copy
// and pass-through forwards what the caller sent. Also the keys whose strings
// are ids and payloads rather than text, which every text scan skips.
import type { RawObject } from './canonical';

export function isObject(value: unknown): value is RawObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `object` itself when `key` already holds `value`, else a shallow copy with it. */
export function withField<T extends RawObject>(object: T, key: string, value: unknown): T {
  return object[key] === value ? object : { ...object, [key]: value };
}

/** `items` itself when `edit` changed none of them, else a new array. */
export function editItems<T>(items: readonly T[], edit: (item: T, index: number) => T): T[] {
  let out: T[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as T;
    const edited = edit(item, i);
    if (edited !== item) {
      out ??= items.slice();
      out[i] = edited;
    }
  }
  return out ?? (items as T[]);
}

/**
 * Keys whose strings are not text a model reads or writes: ids, signatures,
 * binary or encrypted payloads, media types, addresses, states and cache
 * settings. Changing them would break a request (a signed thinking block, a
 * tool call id) or a reply (an item id the client refers to) without
 * protecting anything.
 */
export const OPAQUE_KEYS: ReadonlySet<string> = new Set([
  'type',
  'id',
  'item_id',
  'container_id',
  'tool_use_id',
  'name',
  'server_label',
  'status',
  'obfuscation',
  'signature',
  'data',
  'media_type',
  'cache_control',
  'citations',
  'encrypted_content',
  'encrypted_index',
  'call_id',
  'file_id',
  'url',
]);
