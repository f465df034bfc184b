// The one internal shape in the middle of the data plane. Each protocol form
// (messages, chat-completions) is one decoder into CanonicalRequest and one
// encoder from CanonicalEvent; each upstream is one adapter between the two.
// Routing, guardrails and metering only ever see these types.

/**
 * `system` is a system turn inside the conversation (the current Messages API
 * and Claude Code put one at any position; the chat form's `system` and
 * `developer` messages after the first user turn become one).
 */
export type Role = 'user' | 'assistant' | 'system';

export type CanonicalContent =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; toolUseId: string; content: string; isError?: boolean }
  | { type: 'thinking'; thinking: string; signature?: string };

export interface CanonicalMessage {
  role: Role;
  content: CanonicalContent[];
}

export interface CanonicalTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export type CanonicalToolChoice =
  | { type: 'auto' }
  | { type: 'any' }
  | { type: 'none' }
  | { type: 'tool'; name: string };

export type ProtocolForm = 'messages' | 'chat_completions';

export interface ThinkingSetting {
  type: 'enabled' | 'adaptive' | 'disabled';
  budgetTokens?: number;
}

/** Effort levels as the APIs name them (Anthropic `output_config.effort`, OpenAI `reasoning_effort`). */
export type Effort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface CanonicalRequest {
  /** The neutral model name the caller asked for (catalog `models[].name`). */
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
  /** Opaque end-user id passed through (`metadata.user_id` / `user`). */
  userId?: string;
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
}

export type BlockStart =
  | { type: 'text' }
  | { type: 'tool_use'; id: string; name: string }
  | { type: 'thinking' };

export type CanonicalEvent =
  | { type: 'message_start'; id: string; model: string }
  | { type: 'block_start'; index: number; block: BlockStart }
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'tool_input_delta'; index: number; partialJson: string }
  | { type: 'thinking_delta'; index: number; text: string }
  | { type: 'signature_delta'; index: number; signature: string }
  | { type: 'block_stop'; index: number }
  | { type: 'usage'; usage: Partial<UpstreamUsage> }
  | { type: 'message_stop'; stopReason: StopReason; stopSequence?: string | null };

/** A whole (non-streamed) answer, as collected from events; its usage is the metered one. */
export interface CanonicalResponse {
  id: string;
  model: string;
  content: CanonicalContent[];
  stopReason: StopReason;
  stopSequence: string | null;
}
