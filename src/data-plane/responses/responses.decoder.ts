// OpenAI Responses form → CanonicalRequest: the whole conversation is in
// `input` (stored context already expanded into it, src/data-plane/stored). `instructions` and leading system or
// developer messages become the system prompt; later ones stay system turns.
// Function calls and their outputs become tool_use / tool_result blocks,
// reasoning items thinking blocks (their encrypted content is the signature),
// `namespace` tools flat functions and `custom` tools functions taking one
// text. What only a Responses-speaking upstream can honour is dropped and listed, or
// refused, when the call is translated. The body travels on as `source`.
import type { components } from '../../generated/messages';
import { invalid } from '../../errors';
import type { CanonicalContent, CanonicalMessage, CanonicalRequest, CanonicalTool, CanonicalToolChoice, OutputFormat, RawObject, RefusedField } from '../../core/canonical';
import { isObject } from '../../core/json-edit';
import { applyReasoningEffort, dataUrl, imageFromUrl, parseArguments, pushTurn } from '../openai-decode';

export type ResponsesRequest = components['schemas']['ResponsesRequest'];

/** How a namespaced function is named for protocols without namespaces (Anthropic and OpenAI tool names allow `_`, not `.`). */
export const NAMESPACE_SEPARATOR = '__';

/** The one parameter a free-text (`custom`) tool takes when translated to a function. */
export const FREEFORM_INPUT = 'input';

const FREEFORM_SCHEMA = {
  type: 'object',
  properties: { [FREEFORM_INPUT]: { type: 'string', description: 'The tool input, as free text.' } },
  required: [FREEFORM_INPUT],
};

/** Top-level fields the gateway reads, or translates to the other protocols. */
const TRANSLATED = new Set([
  'model',
  'input',
  'instructions',
  'stream',
  'store',
  'max_output_tokens',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning',
  'text',
  'include',
  'user',
  'previous_response_id',
  'conversation',
  'background',
]);

/** Top-level fields whose effect the caller relies on and the other protocols cannot give. */
function topLevelRefusal(key: string, value: unknown): string | undefined {
  switch (key) {
    case 'top_logprobs':
      return typeof value === 'number' && value > 0 ? 'log probabilities have no counterpart' : undefined;
    case 'prompt':
      return value != null ? 'stored prompt templates live on OpenAI' : undefined;
    default:
      return undefined;
  }
}

/** `include` values other protocols can honour: reasoning the caller can send back (thinking signatures). */
const HONOURED_INCLUDES = new Set(['reasoning.encrypted_content']);

/** What translating the body would lose, found while decoding it (where every path is known). */
class Untranslated {
  private readonly dropped = new Set<string>();
  readonly refused: RefusedField[] = [];

  drop(name: string): void {
    this.dropped.add(name);
  }

  refuse(field: string, reason: string): void {
    this.refused.push({ field, reason });
  }

  topLevel(body: RawObject): void {
    for (const key in body) {
      if (TRANSLATED.has(key)) continue;
      const value = body[key];
      const reason = topLevelRefusal(key, value);
      if (reason !== undefined) this.refuse(key, reason);
      else if (value != null && value !== false) this.drop(key);
    }
    if (Array.isArray(body.include)) for (const value of body.include) if (!HONOURED_INCLUDES.has(String(value))) this.drop(`include ${String(value)}`);
    if (isObject(body.text) && body.text.verbosity != null) this.drop('text.verbosity');
  }

  result() {
    return { dropped: [...this.dropped], refused: this.refused };
  }
}

type Part = RawObject & { type?: unknown };

class InputDecoder {
  readonly system: string[] = [];
  readonly messages: CanonicalMessage[] = [];

  constructor(
    private readonly notes: Untranslated,
    /** Flat tool names by `namespace` and function name, for earlier calls of namespaced tools. */
    private readonly flatNames: ReadonlyMap<string, string>,
  ) {}

  /** A content part a user, a tool output or an assistant turn holds. */
  private part(p: Part, path: string): CanonicalContent {
    switch (p.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        return { type: 'text', text: String(p.text ?? '') };
      case 'refusal':
        return { type: 'text', text: String(p.refusal ?? '') };
      case 'input_image':
        if (typeof p.image_url === 'string' && p.image_url !== '') return { type: 'image', source: imageFromUrl(p.image_url) };
        this.notes.refuse(`${path}.file_id`, 'only images given by URL or as a data: URL can be translated (file ids belong to OpenAI)');
        return { type: 'other', raw: p };
      case 'input_file': {
        const data = typeof p.file_data === 'string' ? (dataUrl(p.file_data) ?? { mediaType: 'application/pdf', data: p.file_data }) : undefined;
        if (data) return { type: 'document', source: { kind: 'base64', ...data }, ...(typeof p.filename === 'string' ? { title: p.filename } : {}) };
        this.notes.refuse(path, 'only files given inline as file_data can be translated (file ids and URLs belong to OpenAI)');
        return { type: 'other', raw: p };
      }
      default:
        this.notes.refuse(`${path}.type`, `a "${String(p.type)}" content part has no counterpart`);
        return { type: 'other', raw: p };
    }
  }

  private content(content: unknown, path: string): CanonicalContent[] {
    if (typeof content === 'string') return [{ type: 'text', text: content }];
    if (!Array.isArray(content)) throw invalid(path, `${path}: must be a string or an array of content parts`);
    return content.map((p: unknown, i) => (isObject(p) ? this.part(p, `${path}.${i}`) : invalidPart(`${path}.${i}`)));
  }

  private text(content: unknown, path: string): string {
    return this.content(content, path)
      .map((c) => (c.type === 'text' ? c.text : ''))
      .join('\n\n');
  }

  item(item: RawObject, path: string): void {
    const type = typeof item.type === 'string' ? item.type : 'message';
    switch (type) {
      case 'message':
        this.message(item, path);
        return;
      case 'function_call':
      case 'custom_tool_call': {
        const custom = type === 'custom_tool_call';
        const name = String(item.name);
        const namespace = typeof item.namespace === 'string' ? item.namespace : undefined;
        const flat = namespace === undefined ? name : (this.flatNames.get(`${namespace}\u0000${name}`) ?? `${namespace}${NAMESPACE_SEPARATOR}${name}`);
        const input = custom ? { [FREEFORM_INPUT]: String(item.input ?? '') } : argumentsOf(item.arguments, `${path}.arguments`);
        pushTurn(this.messages, 'assistant', [{ type: 'tool_use', id: String(item.call_id), name: flat, input }]);
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const output = item.output;
        const content = typeof output === 'string' ? [{ type: 'text' as const, text: output }] : this.content(output, `${path}.output`);
        pushTurn(this.messages, 'user', [{ type: 'tool_result', toolUseId: String(item.call_id), content }]);
        return;
      }
      case 'reasoning': {
        const thinking = reasoningText(item);
        const signature = typeof item.encrypted_content === 'string' && item.encrypted_content !== '' ? item.encrypted_content : undefined;
        if (thinking === '' && signature === undefined) return;
        pushTurn(this.messages, 'assistant', [{ type: 'thinking', thinking, ...(signature !== undefined ? { signature } : {}) }]);
        return;
      }
      case 'item_reference':
        // Resolved from the store before decoding; one left here was never looked up.
        throw invalid(path, `${path}: an item reference must name a stored item`);
      default:
        // Hosted tool calls and their results (web search, file search, …) ran on an OpenAI upstream.
        this.notes.drop(`${type} items`);
    }
  }

  private message(item: RawObject, path: string): void {
    const role = item.role;
    const contentPath = `${path}.content`;
    switch (role) {
      case 'system':
      case 'developer':
        // Before the conversation starts it is the system prompt; later, a system turn at its position.
        if (this.messages.length === 0) this.system.push(this.text(item.content, contentPath));
        else pushTurn(this.messages, 'system', [{ type: 'text', text: this.text(item.content, contentPath) }]);
        return;
      case 'user':
        pushTurn(this.messages, 'user', this.content(item.content, contentPath));
        return;
      case 'assistant': {
        const content = this.content(item.content, contentPath).filter((c) => c.type !== 'text' || c.text !== '');
        if (content.length > 0) pushTurn(this.messages, 'assistant', content);
        return;
      }
      default:
        throw invalid(`${path}.role`, `${path}.role: must be one of user, assistant, system, developer`);
    }
  }
}

function invalidPart(path: string): never {
  throw invalid(path, `${path}: must be a content part object`);
}

function argumentsOf(text: unknown, path: string): unknown {
  return typeof text !== 'string' || text.trim() === '' ? {} : parseArguments(text, path);
}

/** A reasoning item's readable text: its summary, else its reasoning text. */
function reasoningText(item: RawObject): string {
  const parts = Array.isArray(item.summary) && item.summary.length > 0 ? item.summary : Array.isArray(item.content) ? item.content : [];
  return parts.flatMap((p: unknown) => (isObject(p) && typeof p.text === 'string' ? [p.text] : [])).join('\n\n');
}

function functionTool(t: RawObject, flatName: string, namespace?: string): CanonicalTool {
  const freeform = t.type === 'custom';
  return {
    name: flatName,
    ...(typeof t.description === 'string' ? { description: t.description } : {}),
    inputSchema: freeform ? FREEFORM_SCHEMA : isObject(t.parameters) ? t.parameters : { type: 'object', properties: {} },
    kind: 'custom',
    raw: t,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(freeform ? { freeform: true } : {}),
  };
}

/** Functions, free-text tools and namespaces of them; hosted tools have no counterpart elsewhere and are dropped and listed. */
function decodeTools(tools: readonly unknown[], notes: Untranslated): CanonicalTool[] {
  const out: CanonicalTool[] = [];
  tools.forEach((tool, i) => {
    if (!isObject(tool)) return;
    if (tool.type === 'function' || tool.type === 'custom') out.push(functionTool(tool, String(tool.name)));
    else if (tool.type === 'namespace' && Array.isArray(tool.tools)) {
      const namespace = String(tool.name);
      for (const inner of tool.tools) {
        if (isObject(inner) && (inner.type === 'function' || inner.type === 'custom')) {
          out.push(functionTool(inner, `${namespace}${NAMESPACE_SEPARATOR}${String(inner.name)}`, namespace));
        } else notes.drop(`tools.${i} (namespace ${namespace}: ${isObject(inner) ? String(inner.type) : 'invalid'} tool)`);
      }
    } else notes.drop(`tools.${i} (${String(tool.type)})`);
  });
  return out;
}

function decodeToolChoice(body: ResponsesRequest, tools: readonly CanonicalTool[], notes: Untranslated): CanonicalToolChoice | undefined {
  const choice = body.tool_choice;
  const parallel = body.parallel_tool_calls === false ? { disableParallel: true } : {};
  if (choice === undefined || choice === null) return body.parallel_tool_calls === false ? { type: 'auto', disableParallel: true } : undefined;
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...parallel };
  if (typeof choice === 'object' && (choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') {
    const namespace = typeof choice.namespace === 'string' ? choice.namespace : undefined;
    const name = namespace === undefined ? choice.name : `${namespace}${NAMESPACE_SEPARATOR}${choice.name}`;
    if (tools.some((t) => t.name === name)) return { type: 'tool', name, ...parallel };
  }
  notes.refuse('tool_choice', 'only none, auto, required and a named function or custom tool can be translated');
  return undefined;
}

function outputFormat(text: ResponsesRequest['text']): OutputFormat | undefined {
  const format = text?.format;
  if (!format) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') return undefined;
  return {
    type: 'json_schema',
    schema: isObject(format.schema) ? format.schema : { type: 'object' },
    ...(typeof format.name === 'string' ? { name: format.name } : {}),
    ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
  };
}

export function decodeResponsesRequest(body: ResponsesRequest, defaultMaxTokens: number): CanonicalRequest {
  // Stored state (previous_response_id, conversation, item references) was expanded into `input` before this (src/data-plane/stored).
  if (body.background === true) throw invalid('background', 'background: background responses are not supported by the gateway');
  if (body.input === undefined) throw invalid('input', 'input: Field required (or name stored context with previous_response_id or conversation)');
  const notes = new Untranslated();
  notes.topLevel(body);
  const tools = body.tools?.length ? decodeTools(body.tools, notes) : [];
  const flatNames = new Map(tools.flatMap((t) => (t.namespace !== undefined ? [[`${t.namespace}\u0000${String(t.raw?.name)}`, t.name] as const] : [])));
  const input = new InputDecoder(notes, flatNames);
  if (typeof body.input === 'string') input.item({ role: 'user', content: body.input }, 'input');
  else body.input.forEach((item, i) => input.item(item as RawObject, `input.${i}`));
  if (input.messages.length === 0) throw invalid('input', 'input: at least one user or assistant item is required');

  const request: CanonicalRequest = {
    model: body.model,
    messages: input.messages,
    maxTokens: body.max_output_tokens ?? defaultMaxTokens,
    stream: body.stream ?? false,
  };
  const system = [...(typeof body.instructions === 'string' && body.instructions !== '' ? [body.instructions] : []), ...input.system];
  if (system.length > 0) request.system = system.join('\n\n');
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.topP = body.top_p;
  if (tools.length > 0) request.tools = tools;
  const choice = decodeToolChoice(body, tools, notes);
  if (choice) request.toolChoice = choice;
  applyReasoningEffort(request, body.reasoning?.effort);
  const format = outputFormat(body.text);
  if (format) request.outputFormat = format;
  if (typeof body.user === 'string' && body.user !== '') request.userId = body.user;
  request.source = {
    form: 'responses',
    body,
    ...(Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content') ? { encryptedReasoning: true } : {}),
    untranslated: notes.result(),
  };
  return request;
}
