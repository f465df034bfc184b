// Copy-on-write edits of a caller's JSON body. Input guardrails rewrite only
// the texts they redact; everything else (and the whole body, when nothing
// matched) stays the very object the caller sent, so pass-through forwards it
// unchanged and an untouched request costs no copy.
import { editItems, isObject, OPAQUE_KEYS, withField } from '../core/json-edit';
import type { InputInspector } from '../guardrails/guardrail-engine';
import { tooDeep } from '../http/openapi-router';

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
