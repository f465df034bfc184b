// The one internal shape in the middle of the data plane. Each protocol form
// (messages, chat-completions, responses) is one decoder into CanonicalRequest and one
// encoder from CanonicalEvent; each upstream is one adapter between the two.
// Routing, guardrails and metering only ever see these types; they live in
// core because providers, routing, metering and guardrails all read them.
//
// Same-protocol calls pass through: the request keeps the caller's body as
// sent (`source`), and events keep the upstream's own fields (`raw`), so a
// Messages client talking to an Anthropic upstream gets every field, block and
// event the upstream sent, not only the ones this file names. The canonical
// fields are what routing, guardrails, metering and cross-protocol
// translation read.

/**
 * `system` is a system turn inside the conversation (the current Messages API
 * and Claude Code put one at any position; the chat form's `system` and
 * `developer` messages after the first user turn become one).
 */
export type Role = 'user' | 'assistant' | 'system';

/** A JSON object as an upstream or a client sent it, carried through untouched. */
export type RawObject = Record<string, unknown>;

export type ImageSource = { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string } | { kind: 'file'; fileId: string };

export type DocumentSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'text'; data: string }
  | { kind: 'url'; url: string }
  | { kind: 'content'; content: CanonicalContent[] }
  | { kind: 'file'; fileId: string };

export type CanonicalContent =
  | { type: 'text'; text: string }
  | { type: 'image'; source: ImageSource }
  | { type: 'document'; source: DocumentSource; title?: string; context?: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; toolUseId: string; content: CanonicalContent[]; isError?: boolean }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'search_result'; source: string; title: string; texts: string[] }
  /** A block kind with no canonical form (server tool calls and results, kinds added later), as sent. */
  | { type: 'other'; raw: RawObject };

export interface CanonicalMessage {
  role: Role;
  content: CanonicalContent[];
}

/**
 * A tool definition. `kind: 'custom'` is a function the caller runs; any other
 * kind is an upstream server tool (`web_search_20250305`, `bash_20250124`, …)
 * that only its own protocol can run.
 */
export interface CanonicalTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** `custom` for caller-run functions; otherwise the server tool's `type`. */
  kind?: string;
  /** The definition as the caller sent it (server tools carry fields of their own). */
  raw?: RawObject;
  /**
   * Responses form: the `namespace` tool this function was declared in. `name`
   * is then the flat name other protocols see (`<namespace>__<name>`), and a
   * call of it is answered with the namespace and the function's own name.
   */
  namespace?: string;
  /**
   * Responses form: a `custom` tool, whose input is free text rather than
   * JSON. Other protocols see a function taking `{"input": "<text>"}`.
   */
  freeform?: boolean;
}

export type CanonicalToolChoice =
  | { type: 'auto'; disableParallel?: boolean }
  | { type: 'any'; disableParallel?: boolean }
  | { type: 'none' }
  | { type: 'tool'; name: string; disableParallel?: boolean };

export type ProtocolForm = 'messages' | 'chat_completions' | 'responses';

export interface ThinkingSetting {
  type: 'enabled' | 'adaptive' | 'disabled';
  budgetTokens?: number;
}

/** Effort levels as the APIs name them (Anthropic `output_config.effort`, OpenAI `reasoning_effort`). */
export type Effort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** A structured-output request: JSON matching a schema, or any JSON object. */
export type OutputFormat = { type: 'json_schema'; schema: Record<string, unknown>; name?: string; strict?: boolean } | { type: 'json_object' };

/**
 * The caller's request as it arrived (guardrail redactions applied), for
 * same-protocol pass-through: the adapter of an upstream that speaks `form`
 * sends this body with only the fields the gateway owns changed.
 */
export interface SourceRequest {
  form: ProtocolForm;
  body: RawObject;
  /** Anthropic `anthropic-version` and `anthropic-beta` as the caller sent them. */
  anthropicVersion?: string;
  /** Responses form: the caller asked for `reasoning.encrypted_content` (reasoning it can send back). */
  encryptedReasoning?: boolean;
  /**
   * Responses form: the gateway keeps the call (store, conversation), so a
   * Responses upstream is asked for encrypted reasoning whether the caller
   * asked or not: with `store: false` upstream, a follow-up can only carry
   * reasoning as its encrypted content.
   */
  keepReasoning?: boolean;
  anthropicBeta?: string;
  /**
   * The caller's top-level fields (and block settings such as
   * `cache_control`) that the other protocol has no counterpart for: dropped
   * and listed when the call is translated, or refused (400 naming the field)
   * where dropping would change what the caller relies on.
   */
  untranslated: { dropped: string[]; refused: RefusedField[] };
}

export interface RefusedField {
  field: string;
  /** Why the other protocol cannot honour it, for the 400's message. */
  reason: string;
}

export interface CanonicalRequest {
  /** The model name the caller asked for (a neutral name or one of its aliases). */
  model: string;
  system?: string;
  messages: CanonicalMessage[];
  maxTokens: number;
  stream: boolean;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  tools?: CanonicalTool[];
  toolChoice?: CanonicalToolChoice;
  /**
   * The caller's thinking setting. `enabled` asks for deep reasoning (the
   * thinking tier); `adaptive` only permits it, so the complexity assessment
   * still picks the tier; `disabled` never thinks. Absent: no preference
   * (as `adaptive`).
   */
  thinking?: ThinkingSetting;
  /** How much effort the caller asks for (`output_config.effort` / `reasoning_effort`), when it says. */
  effort?: Effort;
  /** Structured output (`output_config.format` / `response_format`). */
  outputFormat?: OutputFormat;
  /** Opaque end-user id passed through (`metadata.user_id` / `user`). */
  userId?: string;
  /** The caller's body, for pass-through to an upstream of the same protocol. */
  source?: SourceRequest;
  /**
   * Credit was reserved for at most `maxTokens` of output: the upstream gets
   * that bound even where the caller's form let it set none (docs/architecture.md §9).
   */
  boundOutput?: boolean;
}

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | 'pause_turn';

/**
 * Raw upstream token counts, before unify factors. `inputCacheMiss` includes
 * cache-creation tokens (Anthropic) / the uncached part of `prompt_tokens`
 * (OpenAI). Values are cumulative: a later `usage` event overwrites.
 */
export interface UpstreamUsage {
  inputCacheHit: number;
  inputCacheMiss: number;
  output: number;
  /**
   * The part of `inputCacheMiss` that wrote the prompt cache, by TTL
   * (Anthropic `cache_creation`; an unsplit count is 5-minute, the default
   * TTL): billed at the deployment's write factors (docs/architecture.md §7).
   */
  cacheWrite5m?: number;
  cacheWrite1h?: number;
}

/** `raw`: the upstream's own content block as it started (same-protocol relay). */
export type BlockStart =
  | { type: 'text'; raw?: RawObject }
  | { type: 'tool_use'; id: string; name: string; raw?: RawObject }
  | { type: 'thinking'; raw?: RawObject }
  | { type: 'other'; raw: RawObject };

export type CanonicalEvent =
  /** `raw`: the upstream message's fields beyond the ones the gateway owns (id, model, usage, content). */
  | { type: 'message_start'; id: string; model: string; raw?: RawObject }
  | { type: 'block_start'; index: number; block: BlockStart }
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'tool_input_delta'; index: number; partialJson: string }
  | { type: 'thinking_delta'; index: number; text: string }
  | { type: 'signature_delta'; index: number; signature: string }
  /**
   * A delta of a kind with no canonical form, as sent: an Anthropic delta
   * (`citations_delta`, kinds added later) of block `index`, or the fields of
   * an OpenAI chunk's delta (`delta`) and choice (`choice`, e.g. `logprobs`)
   * beyond the canonical ones (`index` -1).
   */
  | { type: 'raw_delta'; index: number; delta: RawObject; choice?: RawObject }
  | { type: 'block_stop'; index: number }
  /** `extra`: upstream usage fields the gateway does not own (`server_tool_use`, `service_tier`, …). */
  | { type: 'usage'; usage: Partial<UpstreamUsage>; extra?: RawObject }
  /**
   * A top-level stream event of a kind the gateway does not know, as sent.
   * With `textStream`, the event carries one piece of streamed text in
   * `data[field]` (a hosted tool's code or arguments, a delta kind added
   * later): output guardrails read the pieces of stream `id` as one text, and
   * may hold, mask or cut them; a `block_stop` with index `id` ends it.
   */
  | { type: 'raw_event'; event: string; data: RawObject; textStream?: TextStream }
  /**
   * `raw`: the upstream's own stop reason and the fields of its closing
   * message delta beyond stop reason, stop sequence and usage.
   */
  | { type: 'message_stop'; stopReason: StopReason; stopSequence?: string | null; raw?: MessageStopRaw };

/** Streamed text in an event the gateway has no canonical form for: which stream, and which field of the event holds the piece. */
export interface TextStream {
  id: number;
  field: string;
}

/** What an upstream said at the end of its answer beyond what the canonical stop holds, for same-protocol relay. */
export interface MessageStopRaw {
  /** The upstream's own stop (Anthropic `stop_reason`) or finish (OpenAI `finish_reason`) reason. */
  stopReason?: string;
  /** Anthropic: `message_delta.delta` fields beyond stop_reason and stop_sequence. */
  delta?: RawObject;
  /** Anthropic: `message_delta` fields beyond type, delta and usage (e.g. `context_management`). */
  event?: RawObject;
  /** OpenAI (plain reply): the choice's message fields beyond the canonical ones (e.g. `annotations`). */
  message?: RawObject;
  /** OpenAI (plain reply): the choice's fields beyond index, message and finish_reason (e.g. `logprobs`). */
  choice?: RawObject;
}

/** A whole (non-streamed) answer, as collected from events; its usage is the metered one. */
export interface CanonicalResponse {
  id: string;
  model: string;
  content: CanonicalContent[];
  stopReason: StopReason;
  stopSequence: string | null;
}
