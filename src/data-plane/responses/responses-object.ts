// The Response object's own parts: usage in the Responses shape (the same
// numbers as the other forms), the request fields it echoes, and what the
// encoder is told about the call.
import type { ResponseUsage } from '../../metering/tiers';
import type { CanonicalTool, RawObject } from '../../core/canonical';
import { isObject } from '../../core/json-edit';

/** Responses-form usage: the unified counts (the same numbers as the other forms), then the gateway's extras. */
export function responsesUsage(usage: ResponseUsage, extra?: RawObject): RawObject {
  return {
    ...extra,
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_input_tokens },
    output_tokens: usage.output_tokens,
    output_tokens_details: isObject(extra?.output_tokens_details) ? extra.output_tokens_details : { reasoning_tokens: 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
    cached_input_tokens: usage.cached_input_tokens,
    price_tier: usage.price_tier,
    thinking: usage.thinking,
  };
}

/** The request fields a Response object echoes, as the caller sent them (defaults as OpenAI answers them). */
export function requestEcho(body: RawObject): RawObject {
  const reasoning = isObject(body.reasoning) ? body.reasoning : {};
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    temperature: body.temperature ?? null,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: body.truncation ?? 'disabled',
    user: body.user ?? null,
  };
}

export interface ResponsesEncoderOptions {
  /** `resp_…`, random (stored responses are looked up by it). */
  id: string;
  /** The upstream model actually used. */
  model: string;
  /** The request fields the Response echoes (an upstream's own, when relaying). */
  echo: RawObject;
  relay: boolean;
  /** The caller asked for `reasoning.encrypted_content`. */
  encryptedReasoning: boolean;
  /** The caller's tools: namespaced and free-text tools are answered in their own shape. */
  tools: readonly CanonicalTool[];
  /** The stored-state fields the Response shows (`store`, `previous_response_id`, `conversation`), over an upstream's own. */
  state?: RawObject;
  /** Told the final Response, and its output items as kept (encrypted reasoning included, asked for or not). */
  onFinal?: (response: RawObject, keptOutput: RawObject[]) => void;
}
