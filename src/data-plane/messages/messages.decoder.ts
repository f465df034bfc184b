// Anthropic Messages form → CanonicalRequest. The body has already passed the
// OpenAPI schema (openapi/messages.yaml); this only changes its shape.
import type { components } from '../../generated/messages';
import { invalid } from '../../errors';
import type { CanonicalContent, CanonicalMessage, CanonicalRequest, CanonicalToolChoice } from '../canonical';

type Schemas = components['schemas'];
export type MessagesRequest = Schemas['MessagesRequest'];
export type CountTokensRequest = Schemas['CountTokensRequest'];
type ContentBlockParam = Schemas['ContentBlockParam'];
type TextBlockParam = Schemas['TextBlockParam'];

const textOf = (content: string | TextBlockParam[] | undefined): string =>
  typeof content === 'string' ? content : (content ?? []).map((b) => b.text).join('\n\n');

function block(b: ContentBlockParam, path: string): CanonicalContent | null {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image':
      if (b.source.type !== 'base64') throw invalid(`${path}.source`, `${path}.source: only base64 image sources are supported`);
      return { type: 'image', mediaType: b.source.media_type, data: b.source.data };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
    case 'tool_result':
      return { type: 'tool_result', toolUseId: b.tool_use_id, content: textOf(b.content), ...(b.is_error ? { isError: true } : {}) };
    case 'thinking':
      return { type: 'thinking', thinking: b.thinking, ...(b.signature ? { signature: b.signature } : {}) };
    case 'redacted_thinking':
      // Opaque to every upstream but the one that produced it; dropping it is what the API does across models.
      return null;
    case 'document':
      if (b.source.type === 'text') return { type: 'text', text: b.source.data };
      throw invalid(`${path}.source`, `${path}.source: only plain-text documents are supported`);
  }
}

function toolChoice(choice: Schemas['ToolChoice'] | undefined): CanonicalToolChoice | undefined {
  if (!choice) return undefined;
  return choice.type === 'tool' ? { type: 'tool', name: choice.name } : { type: choice.type };
}

export function decodeMessagesBody(body: CountTokensRequest, maxTokens: number, stream: boolean): CanonicalRequest {
  const messages: CanonicalMessage[] = body.messages.map((m, i) => ({
    role: m.role,
    content:
      typeof m.content === 'string'
        ? [{ type: 'text', text: m.content }]
        : m.content.flatMap((b, j) => block(b, `messages.${i}.content.${j}`) ?? []),
  }));
  const system = body.system === undefined ? undefined : textOf(body.system);
  const thinking = body.thinking;
  const request: CanonicalRequest = { model: body.model, messages, maxTokens, stream };
  if (system) request.system = system;
  if (body.tools?.length) {
    request.tools = body.tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      inputSchema: (t.input_schema ?? { type: 'object' }) as Record<string, unknown>,
    }));
  }
  const choice = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  if (thinking) {
    // `between_tools` (SDK 1.x) permits thinking between tool calls: adaptive.
    request.thinking =
      thinking.type === 'enabled'
        ? { type: 'enabled', budgetTokens: thinking.budget_tokens }
        : { type: thinking.type === 'disabled' ? 'disabled' : 'adaptive' };
  }
  const effort = body.output_config?.effort;
  if (effort) request.effort = effort;
  return request;
}

export function decodeMessagesRequest(body: MessagesRequest): CanonicalRequest {
  const request = decodeMessagesBody(body, body.max_tokens, body.stream ?? false);
  if (body.temperature !== undefined) request.temperature = body.temperature;
  if (body.top_p !== undefined) request.topP = body.top_p;
  if (body.top_k !== undefined) request.topK = body.top_k;
  if (body.stop_sequences?.length) request.stopSequences = body.stop_sequences;
  if (typeof body.metadata?.user_id === 'string') request.userId = body.metadata.user_id;
  if (request.thinking?.budgetTokens !== undefined && request.thinking.budgetTokens >= request.maxTokens) {
    throw invalid('thinking.budget_tokens', 'thinking.budget_tokens must be less than max_tokens');
  }
  return request;
}
