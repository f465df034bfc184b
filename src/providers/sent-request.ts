// What one attempt sent its upstream, kept for the calls whose upstream usage
// never arrives: a client that hangs up before the first byte, or in the
// middle of an OpenAI-protocol stream (whose input is only in the last
// chunk), and compatible servers that report no usage at all. The upstream
// charges such a call's prompt all the same, so metering bills it from a
// local count of what was sent, marked `estimated` on the record.
//
// The count is lazy: the body is walked and tokenized only when a call needs
// it, never on an ordinary call that reports its own usage.
import { isObject } from '../core/json-edit';
import { countTokensYielding } from '../tokenizer';

/**
 * An image (or audio clip) the upstream reads: Anthropic bills up to about
 * 1,600 tokens for the largest image it does not downscale (1.15 megapixels,
 * width × height / 750), OpenAI 765 for a 1024×1024 image at high detail and
 * about 1,100 for 2048×768. The upper figure, since the pixels are unknown.
 */
export const SENT_IMAGE_TOKENS = 1_600;
/** A binary document or file (PDF): one page at Anthropic's upper figure of 1,500 to 3,000 tokens a page. */
export const SENT_DOCUMENT_TOKENS = 3_000;

export class SentRequest {
  private reachedUpstream = false;
  private counter: (() => Promise<number>) | undefined;
  private counted: Promise<number> | undefined;

  /** The adapter built what it sends; `count` counts its input tokens locally (raw upstream tokens). */
  built(count: () => Promise<number>): void {
    this.counter = count;
    this.counted = undefined;
  }

  /** Its bytes were handed to the upstream's socket (or, for the built-in mock, the call started). */
  markSent(): void {
    this.reachedUpstream = true;
  }

  /** The bytes went to a pooled connection the server had already closed: the request is sent again, elsewhere. */
  markUnsent(): void {
    this.reachedUpstream = false;
  }

  /** Whether the upstream was asked: from then on it charges the prompt, whatever happens to the reply. */
  get reached(): boolean {
    return this.reachedUpstream;
  }

  /** Raw input tokens of what was sent, by the local tokenizer; 0 when nothing reached the upstream. Counted once. */
  inputTokens(): Promise<number> {
    if (!this.reachedUpstream || this.counter === undefined) return Promise.resolve(0);
    this.counted ??= this.counter();
    return this.counted;
  }
}

/**
 * Keys whose values the model does not read as prompt text: ids, signatures,
 * encrypted or binary payloads, media types, cache settings and the request's
 * own knobs. Everything else with a string in it is counted, so fields and
 * block kinds added after this code was written are billed rather than free.
 */
const UNREAD_KEYS = new Set([
  'model',
  'type',
  'role',
  'id',
  'tool_use_id',
  'tool_call_id',
  'call_id',
  'signature',
  'encrypted_content',
  'encrypted_index',
  'media_type',
  'cache_control',
  'stop',
  'stop_sequences',
  'metadata',
  'user',
  'service_tier',
  'reasoning_effort',
  'tool_choice',
  'stream_options',
  'include',
  'store',
  'previous_response_id',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
  'truncation',
  'status',
  'detail',
  'file_id',
]);

/** Objects whose JSON the model reads whole (tool schemas, a tool call's input): keys and punctuation count too. */
const JSON_KEYS = new Set(['input_schema', 'parameters', 'schema', 'input']);

/** Content kinds holding pixels or sound: a fixed count, their bytes are not text. */
const IMAGE_KINDS = new Set(['image', 'image_url', 'input_image', 'input_audio']);
/** Content kinds holding a file: a fixed count, unless an Anthropic document carries its text. */
const DOCUMENT_KINDS = new Set(['document', 'file', 'input_file']);

/** Longer strings that start like a data URL are media wherever they sit. */
const DATA_URL = /^data:[\w.+-]+\/[\w.+-]+[;,]/;
/** Where the three protocols put a medium's bytes inline: always base64 under these keys… */
const BYTES_KEYS = new Set(['data', 'file_data']);
/** …and a data URL where an address may be. */
const ADDRESS_KEYS = new Set(['url', 'image_url']);

/**
 * Input tokens of an upstream request body as the adapter built it (any of
 * the three protocols): every text the model reads (system, messages, tool
 * definitions, tool inputs and results) by the local tokenizer (o200k), plus
 * SENT_IMAGE_TOKENS per image and SENT_DOCUMENT_TOKENS per binary document,
 * or fewer for one sent inline in fewer bytes. An upstream's own tokenizer
 * differs by a few percent either way.
 */
export async function countSentBody(body: unknown): Promise<number> {
  const texts: string[] = [];
  const media = { tokens: 0 };
  collect(body, texts, media);
  return (await countTokensYielding(texts.join('\n'))) + media.tokens;
}

function collect(value: unknown, texts: string[], media: { tokens: number }): void {
  if (typeof value === 'string') {
    if (value.length > 64 && DATA_URL.test(value)) media.tokens += Math.min(SENT_IMAGE_TOKENS, value.length);
    else if (value !== '') texts.push(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) collect(item, texts, media);
    return;
  }
  if (!isObject(value)) return;
  const kind = value.type;
  if (typeof kind === 'string') {
    if (IMAGE_KINDS.has(kind)) {
      media.tokens += mediaTokens(value, SENT_IMAGE_TOKENS);
      return;
    }
    // Earlier turns' thinking the upstream cannot read back as words (Anthropic drops it from the context).
    if (kind === 'redacted_thinking') return;
    if (DOCUMENT_KINDS.has(kind) && !carriesText(value)) {
      media.tokens += mediaTokens(value, SENT_DOCUMENT_TOKENS);
      for (const key of ['title', 'context']) if (typeof value[key] === 'string') texts.push(value[key]);
      return;
    }
  }
  for (const key in value) {
    if (UNREAD_KEYS.has(key)) continue;
    const item = value[key];
    // An object only: the Responses API's `input` is the conversation itself (a string or a list of items).
    if (JSON_KEYS.has(key) && isObject(item)) texts.push(JSON.stringify(item));
    else collect(item, texts, media);
  }
}

/**
 * A medium's fixed count, or its inline bytes when they are fewer: the
 * credit reservation bounds an inline medium by its bytes (docs/architecture.md §9), so a
 * few tiny images never bill more than was reserved. One fetched by URL or
 * file id has no bytes here and counts the fixed amount.
 */
function mediaTokens(node: Record<string, unknown>, fixed: number): number {
  const inline = inlineLength(node);
  return inline === 0 ? fixed : Math.min(fixed, inline);
}

/** Characters of base64 data or data URLs in a content part (0 when it only refers to its medium). */
function inlineLength(value: unknown, key = ''): number {
  if (typeof value === 'string') return BYTES_KEYS.has(key) || (ADDRESS_KEYS.has(key) && DATA_URL.test(value)) ? value.length : 0;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + inlineLength(item, key), 0);
  if (!isObject(value)) return 0;
  let total = 0;
  for (const inner in value) total += inlineLength(value[inner], inner);
  return total;
}

/** An Anthropic document given as plain text or as content blocks: its words are read like any text. */
function carriesText(document: Record<string, unknown>): boolean {
  const source = document.source;
  return isObject(source) && (source.type === 'text' || source.type === 'content');
}
