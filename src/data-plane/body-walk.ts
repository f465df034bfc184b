// Copy-on-write edits of a caller's JSON body. Input guardrails rewrite only
// the texts they redact; everything else (and the whole body, when nothing
// matched) stays the very object the caller sent, so pass-through forwards it
// unchanged and an untouched request costs no copy.
import type { InputInspector } from '../guardrails/guardrail-engine';
import { tooDeep } from '../http/openapi-router';
import type { RawObject } from '../core/canonical';

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

/**
 * A value of a kind the gateway does not know (a server tool's result, a
 * block type added after this code was written): every string in it that is
 * not under an opaque key is inspected as text, so new kinds never become a
 * way around the guardrails. Tool inputs inside are inspected as JSON.
 */
export function inspectUnknown(value: unknown, field: string, inspect: InputInspector): unknown {
  if (typeof value === 'string') return inspect.text(value, field);
  if (Array.isArray(value)) return editItems(value, (item: unknown, i) => inspectUnknown(item, `${field}.${i}`, inspect));
  if (!isObject(value)) return value;
  let out = value;
  for (const key in value) {
    if (OPAQUE_KEYS.has(key)) continue;
    const item = value[key];
    const edited = key === 'input' ? inspect.json(item, `${field}.input`) : inspectUnknown(item, `${field}.${key}`, inspect);
    out = withField(out, key, edited);
  }
  return out;
}

/**
 * A JSON text the model reads as data (tool-call arguments): inspected leaf
 * by leaf, so a redaction keeps it valid JSON; as text when it is not JSON.
 * The same string when nothing was redacted.
 */
export function inspectJsonText(text: string, field: string, inspect: InputInspector): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return inspect.text(text, field);
  }
  // Deeper than a body may nest: read as text (no recursion); the decoder refuses it with a 400 naming the field.
  if (tooDeep(parsed) !== undefined) return inspect.text(text, field);
  const inspected = inspect.json(parsed, field);
  return inspected === parsed ? text : JSON.stringify(inspected);
}

/** Content-part kinds of the two OpenAI forms whose text the model reads under `text` (chat; Responses input and output). */
const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);
/** Content-part kinds holding pixels, sound or file bytes or addresses: no text to scan. */
const MEDIA_PARTS = new Set(['image_url', 'input_audio', 'file', 'input_image', 'input_file']);

/**
 * An OpenAI-form content (chat message content, Responses item content or
 * tool output): a string or content parts, each text inspected; part kinds
 * added later are inspected whole.
 */
export function guardOpenAiContent(content: unknown, field: string, inspect: InputInspector): unknown {
  if (typeof content === 'string') return inspect.text(content, field);
  if (!Array.isArray(content)) return content;
  return editItems(content, (part: unknown, i) => {
    if (!isObject(part)) return part;
    const at = `${field}.${i}`;
    const type = String(part.type);
    if (TEXT_PARTS.has(type)) return typeof part.text === 'string' ? withField(part, 'text', inspect.text(part.text, `${at}.text`)) : part;
    if (type === 'refusal') return typeof part.refusal === 'string' ? withField(part, 'refusal', inspect.text(part.refusal, `${at}.refusal`)) : part;
    if (MEDIA_PARTS.has(type)) return part;
    return inspectUnknown(part, at, inspect);
  });
}
