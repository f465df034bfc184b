// OpenAI chat-completions form → CanonicalRequest (spec §2.4). Leading
// `system` and `developer` messages become the top-level system prompt; later
// ones stay system turns at their position. Tool calls and tool messages
// become tool_use / tool_result blocks, `max_tokens` is optional,
// `reasoning_effort` asks for the thinking tier. The body (after the input
// guardrails) travels on as `source`, for pass-through to OpenAI upstreams.
import type { components } from '../../generated/messages';
import { invalid } from '../../errors';
import type {
  CanonicalContent,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  OutputFormat,
  RefusedField,
  SourceRequest,
} from '../../core/canonical';
import { applyReasoningEffort, dataUrl, imageFromUrl, parseArguments, pushTurn as push } from '../openai-decode';

type Schemas = components['schemas'];
export type ChatCompletionRequest = Schemas['ChatCompletionRequest'];
type ChatMessageParam = Schemas['ChatMessageParam'];
type ContentPart = Record<string, unknown> & { type: string };

/** Top-level fields with a counterpart in the Messages API (or that the gateway itself reads). */
const TRANSLATED = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'stream',
  'stream_options',
  'reasoning_effort',
  'response_format',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'stop',
  'temperature',
  'top_p',
  'n',
  'user',
]);

/** Fields whose effect the caller relies on and the Messages API cannot give; refused when they ask for it. */
function refusal(key: string, value: unknown): string | undefined {
  switch (key) {
    case 'logit_bias':
      return value != null && Object.keys(value).length > 0 ? 'token biasing has no Messages API counterpart' : undefined;
    case 'logprobs':
      return value === true ? 'log probabilities have no Messages API counterpart' : undefined;
    case 'top_logprobs':
      return value != null ? 'log probabilities have no Messages API counterpart' : undefined;
    case 'audio':
      return value != null ? 'audio output has no Messages API counterpart' : undefined;
    case 'modalities':
      return Array.isArray(value) && value.some((m) => m !== 'text') ? 'only text output can be translated' : undefined;
    case 'web_search_options':
      return value != null ? 'web search options are OpenAI-only; use the Messages form with the web_search tool' : undefined;
    case 'functions':
    case 'function_call':
      return value != null ? 'legacy functions are not translated; use tools' : undefined;
    default:
      return undefined;
  }
}

function untranslated(body: Record<string, unknown>): SourceRequest['untranslated'] {
  const dropped: string[] = [];
  const refused: RefusedField[] = [];
  for (const key in body) {
    if (TRANSLATED.has(key)) continue;
    const value = body[key];
    const reason = refusal(key, value);
    if (reason !== undefined) refused.push({ field: key, reason });
    else if (value != null && value !== false) dropped.push(key);
  }
  return { dropped, refused };
}

function partsText(content: ChatMessageParam['content'], path: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((p, i) => {
      const part = p as ContentPart;
      if (part.type === 'text') return (part as unknown as Schemas['ChatContentPartText']).text;
      if (part.type === 'refusal') return (part as unknown as Schemas['ChatContentPartRefusal']).refusal;
      throw invalid(`${path}.${i}.type`, `${path}.${i}.type: only text parts are allowed in this message`);
    })
    .join('\n\n');
}

function part(p: ContentPart, path: string, refused: RefusedField[]): CanonicalContent {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: (p as unknown as Schemas['ChatContentPartText']).text };
    case 'refusal':
      return { type: 'text', text: (p as unknown as Schemas['ChatContentPartRefusal']).refusal };
    case 'image_url': {
      return { type: 'image', source: imageFromUrl((p as unknown as Schemas['ChatContentPartImage']).image_url.url) };
    }
    case 'file': {
      const file = (p as unknown as Schemas['ChatContentPartFile']).file;
      const data = typeof file.file_data === 'string' ? dataUrl(file.file_data) : null;
      if (data) return { type: 'document', source: { kind: 'base64', ...data }, ...(file.filename ? { title: file.filename } : {}) };
      refused.push({ field: `${path}.file`, reason: 'only files given inline as file_data (a base64 data: URL) can be translated' });
      return { type: 'other', raw: p };
    }
    default:
      refused.push({ field: `${path}.type`, reason: `a "${p.type}" content part has no Messages API counterpart` });
      return { type: 'other', raw: p };
  }
}

function userContent(content: ChatMessageParam['content'], path: string, refused: RefusedField[]): CanonicalContent[] {
  if (content === null || content === undefined) throw invalid(path, `${path}: content is required`);
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p, i) => part(p as ContentPart, `${path}.${i}`, refused));
}

function toolChoice(body: ChatCompletionRequest, refused: RefusedField[]): CanonicalToolChoice | undefined {
  const choice = body.tool_choice;
  const disableParallel = body.parallel_tool_calls === false ? { disableParallel: true } : {};
  if (choice === undefined || choice === null) return body.parallel_tool_calls === false ? { type: 'auto', disableParallel: true } : undefined;
  if (choice === 'auto') return { type: 'auto', ...disableParallel };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...disableParallel };
  if (typeof choice === 'object' && choice.type === 'function' && choice.function) return { type: 'tool', name: choice.function.name, ...disableParallel };
  refused.push({ field: 'tool_choice', reason: 'only none, auto, required and a named function can be translated' });
  return undefined;
}

function tools(body: ChatCompletionRequest, refused: RefusedField[]): CanonicalTool[] {
  return (body.tools ?? []).map((t, i) => {
    const fn = t.function;
    if (t.type !== 'function' || !fn) {
      refused.push({ field: `tools.${i}.type`, reason: `a "${t.type}" tool has no Messages API counterpart` });
      return { name: t.type, inputSchema: {}, kind: t.type, raw: t };
    }
    return {
      name: fn.name,
      ...(fn.description ? { description: fn.description } : {}),
      inputSchema: (fn.parameters ?? { type: 'object', properties: {} }) as Record<string, unknown>,
      kind: 'custom',
      raw: t,
    };
  });
}

function outputFormat(format: ChatCompletionRequest['response_format']): OutputFormat | undefined {
  if (!format) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const spec = (format as { json_schema?: { name?: string; schema?: Record<string, unknown>; strict?: boolean | null } }).json_schema;
    return {
      type: 'json_schema',
      schema: spec?.schema ?? { type: 'object' },
      ...(spec?.name ? { name: spec.name } : {}),
      ...(typeof spec?.strict === 'boolean' ? { strict: spec.strict } : {}),
    };
  }
  return undefined;
}

/**
 * The one output bound of a chat body. The two fields name the same bound
 * (`max_completion_tokens` is the newer name); an upstream honours either,
 * so two that disagree would be admitted on one and run to the other (docs/architecture.md
 * §9): refused. Equal values are the same bound.
 */
function outputBound(body: ChatCompletionRequest): number | undefined {
  const { max_tokens: older, max_completion_tokens: newer } = body;
  if (older != null && newer != null && older !== newer) {
    throw invalid('max_tokens', `max_tokens (${older}) conflicts with max_completion_tokens (${newer}): send one of them, or the same value in both`);
  }
  return newer ?? older ?? undefined;
}

export function decodeChatRequest(body: ChatCompletionRequest, defaultMaxTokens: number): CanonicalRequest {
  const { dropped, refused } = untranslated(body);
  const system: string[] = [];
  const messages: CanonicalMessage[] = [];
  body.messages.forEach((m, i) => {
    const path = `messages.${i}.content`;
    switch (m.role) {
      case 'system':
      case 'developer':
        // Before the conversation starts it is the system prompt; later, a system turn at its position.
        if (messages.length === 0) system.push(partsText(m.content, path));
        else push(messages, 'system', [{ type: 'text', text: partsText(m.content, path) }]);
        break;
      case 'user':
        push(messages, 'user', userContent(m.content, path, refused));
        break;
      case 'assistant': {
        const content: CanonicalContent[] = [];
        if (m.reasoning_content) content.push({ type: 'thinking', thinking: m.reasoning_content });
        const text = partsText(m.content, path);
        if (text) content.push({ type: 'text', text });
        for (const [j, call] of (m.tool_calls ?? []).entries()) {
          const input = call.function.arguments ? parseArguments(call.function.arguments, `messages.${i}.tool_calls.${j}.function.arguments`) : {};
          content.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
        }
        if (content.length === 0) throw invalid(path, `${path}: an assistant message needs content or tool_calls`);
        push(messages, 'assistant', content);
        break;
      }
      case 'tool':
        if (!m.tool_call_id) throw invalid(`messages.${i}.tool_call_id`, `messages.${i}.tool_call_id: required for a tool message`);
        push(messages, 'user', [{ type: 'tool_result', toolUseId: m.tool_call_id, content: [{ type: 'text', text: partsText(m.content, path) }] }]);
        break;
    }
  });
  if (messages.length === 0) throw invalid('messages', 'messages: at least one user or assistant message is required');

  const request: CanonicalRequest = {
    model: body.model,
    messages,
    maxTokens: outputBound(body) ?? defaultMaxTokens,
    stream: body.stream ?? false,
  };
  if (system.length > 0) request.system = system.join('\n\n');
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.topP = body.top_p;
  if (body.stop !== undefined && body.stop !== null) request.stopSequences = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.tools?.length) request.tools = tools(body, refused);
  const choice = toolChoice(body, refused);
  if (choice) request.toolChoice = choice;
  applyReasoningEffort(request, body.reasoning_effort);
  const format = outputFormat(body.response_format);
  if (format) request.outputFormat = format;
  if (body.user) request.userId = body.user;
  request.source = { form: 'chat_completions', body, untranslated: { dropped, refused } };
  return request;
}
