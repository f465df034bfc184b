// OpenAI chat-completions form → CanonicalRequest (spec §2.4): `system` and
// `developer` messages become the top-level system prompt, tool calls and
// tool messages become tool_use / tool_result blocks, `max_tokens` is
// optional, `reasoning_effort` asks for the thinking tier.
import type { components } from '../../generated/messages';
import { invalid } from '../../errors';
import type { CanonicalContent, CanonicalMessage, CanonicalRequest, CanonicalToolChoice } from '../canonical';

type Schemas = components['schemas'];
export type ChatCompletionRequest = Schemas['ChatCompletionRequest'];
type ChatMessageParam = Schemas['ChatMessageParam'];
type ChatContentPart = Schemas['ChatContentPart'];

const EFFORT_BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 4096, high: 8192, xhigh: 16384, max: 32768 };

function partsText(content: ChatMessageParam['content'], path: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((p, i) => {
      if (p.type === 'text') return p.text;
      if (p.type === 'refusal') return p.refusal;
      throw invalid(`${path}.${i}`, `${path}.${i}: only text parts are allowed here`);
    })
    .join('\n\n');
}

function userContent(content: ChatMessageParam['content'], path: string): CanonicalContent[] {
  if (content === null || content === undefined) throw invalid(path, `${path}: content is required`);
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p: ChatContentPart, i): CanonicalContent => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') {
      const m = /^data:([^;,]+);base64,(.*)$/s.exec(p.image_url.url);
      if (!m) throw invalid(`${path}.${i}.image_url.url`, `${path}.${i}.image_url.url: only data: URLs (base64) are supported`);
      return { type: 'image', mediaType: m[1]!, data: m[2]! };
    }
    throw invalid(`${path}.${i}.type`, `${path}.${i}.type: content part "${p.type}" is not supported`);
  });
}

function toolChoice(choice: ChatCompletionRequest['tool_choice']): CanonicalToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  if (typeof choice === 'object' && choice.function) return { type: 'tool', name: choice.function.name };
  return undefined;
}

/** Appends content to the last message when it has the same role: upstreams want alternating turns. */
function push(messages: CanonicalMessage[], role: 'user' | 'assistant', content: CanonicalContent[]): void {
  const last = messages[messages.length - 1];
  if (last && last.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

export function decodeChatRequest(body: ChatCompletionRequest, defaultMaxTokens: number): CanonicalRequest {
  const system: string[] = [];
  const messages: CanonicalMessage[] = [];
  body.messages.forEach((m, i) => {
    const path = `messages.${i}.content`;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(partsText(m.content, path));
        break;
      case 'user':
        push(messages, 'user', userContent(m.content, path));
        break;
      case 'assistant': {
        const content: CanonicalContent[] = [];
        if (m.reasoning_content) content.push({ type: 'thinking', thinking: m.reasoning_content });
        const text = partsText(m.content, path);
        if (text) content.push({ type: 'text', text });
        for (const [j, call] of (m.tool_calls ?? []).entries()) {
          let input: unknown;
          try {
            input = call.function.arguments ? JSON.parse(call.function.arguments) : {};
          } catch {
            throw invalid(`messages.${i}.tool_calls.${j}.function.arguments`, `messages.${i}.tool_calls.${j}.function.arguments: must be a JSON object`);
          }
          content.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
        }
        if (content.length === 0) throw invalid(path, `${path}: an assistant message needs content or tool_calls`);
        push(messages, 'assistant', content);
        break;
      }
      case 'tool':
        if (!m.tool_call_id) throw invalid(`messages.${i}.tool_call_id`, `messages.${i}.tool_call_id: required for a tool message`);
        push(messages, 'user', [{ type: 'tool_result', toolUseId: m.tool_call_id, content: partsText(m.content, path) }]);
        break;
    }
  });
  if (messages.length === 0) throw invalid('messages', 'messages: at least one user or assistant message is required');

  const request: CanonicalRequest = {
    model: body.model,
    messages,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? defaultMaxTokens,
    stream: body.stream ?? false,
  };
  if (system.length > 0) request.system = system.join('\n\n');
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.topP = body.top_p;
  if (body.stop !== undefined && body.stop !== null) request.stopSequences = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.tools?.length) {
    request.tools = body.tools.map((t, i) => {
      const fn = t.function;
      if (!fn) throw invalid(`tools.${i}.function`, `tools.${i}.function: only function tools are supported`);
      return {
        name: fn.name,
        ...(fn.description ? { description: fn.description } : {}),
        inputSchema: (fn.parameters ?? { type: 'object', properties: {} }) as Record<string, unknown>,
      };
    });
  }
  const choice = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  if (body.reasoning_effort && body.reasoning_effort !== 'none') {
    const budget = Math.min(EFFORT_BUDGET[body.reasoning_effort] ?? 4096, request.maxTokens - 1);
    request.thinking = budget >= 1024 ? { type: 'enabled', budgetTokens: budget } : { type: 'enabled' };
    request.effort = body.reasoning_effort;
  } else if (body.reasoning_effort === 'none') {
    request.thinking = { type: 'disabled' };
    request.effort = 'none';
  }
  if (body.user) request.userId = body.user;
  return request;
}
