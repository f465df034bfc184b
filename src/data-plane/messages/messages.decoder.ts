// Anthropic Messages form → CanonicalRequest. The body has already passed the
// OpenAPI schema (openapi/messages.yaml) and the input guardrails; this only
// builds the canonical view that routing, metering and translation to other
// protocols read. The body itself travels on as `source`, for pass-through.
import type { components } from '../../generated/messages';
import { invalid } from '../../errors';
import type {
  CanonicalContent,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  DocumentSource,
  Effort,
  ImageSource,
  OutputFormat,
  RefusedField,
  SourceRequest,
} from '../../core/canonical';

type Schemas = components['schemas'];
export type MessagesRequest = Schemas['MessagesRequest'];
export type CountTokensRequest = Schemas['CountTokensRequest'];
type TextBlockParam = Schemas['TextBlockParam'];

/** The caller's Anthropic headers, forwarded to Anthropic upstreams. */
export interface AnthropicHeaders {
  version?: string;
  beta?: string;
}

const EFFORTS = new Set<string>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);

/**
 * Top-level fields with a counterpart in OpenAI Chat Completions (or that the
 * gateway itself reads). The rest are listed as dropped on a translated call,
 * or refused when dropping them would change what the caller relies on.
 */
const TRANSLATED = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'metadata',
  'service_tier',
]);
/** Why a top-level field cannot be translated (a Map: the keys are the caller's, and `constructor` is in every object). */
const REFUSED = new Map<string, string>([['mcp_servers', 'MCP servers are connected by Anthropic upstreams only']]);

const textOf = (blocks: readonly TextBlockParam[]): string => blocks.map((b) => b.text).join('\n\n');

/**
 * What translating the body to the chat form would lose, found while
 * decoding it (where every field's path is known): fields and block kinds
 * with no counterpart are dropped and listed; those the caller relies on are
 * refused with their path.
 */
class Untranslated {
  private readonly dropped = new Set<string>();
  private readonly refused: RefusedField[] = [];

  drop(name: string): void {
    this.dropped.add(name);
  }

  refuse(field: string, reason: string): void {
    this.refused.push({ field, reason });
  }

  topLevel(body: Record<string, unknown>): void {
    for (const key in body) {
      if (TRANSLATED.has(key)) continue;
      const reason = REFUSED.get(key);
      if (reason !== undefined) this.refuse(key, reason);
      else this.drop(key);
    }
  }

  result(): SourceRequest['untranslated'] {
    return { dropped: [...this.dropped], refused: this.refused };
  }
}

class BlockDecoder {
  constructor(private readonly notes: Untranslated) {}

  content(content: string | readonly unknown[], path: string): CanonicalContent[] {
    if (typeof content === 'string') return [{ type: 'text', text: content }];
    return content.map((b, i) => this.block(b as Record<string, unknown> & { type: string }, `${path}.${i}`));
  }

  block(b: Record<string, unknown> & { type: string }, path: string): CanonicalContent {
    if (b.cache_control != null) this.notes.drop('cache_control');
    switch (b.type) {
      case 'text':
        if (b.citations != null) this.notes.drop('citations');
        return { type: 'text', text: (b as unknown as TextBlockParam).text };
      case 'image': {
        const source = mediaSource(b as Schemas['ImageBlockParam']);
        if (source?.kind === 'base64' || source?.kind === 'url') return { type: 'image', source };
        this.notes.refuse(`${path}.source`, 'only base64 and URL images can be translated');
        return { type: 'other', raw: b };
      }
      case 'document': {
        const doc = b as Schemas['DocumentBlockParam'];
        const source = mediaSource(doc, (c) => this.content(c, `${path}.source.content`));
        if (doc.citations != null) this.notes.drop('citations');
        if (!source || source.kind === 'url' || source.kind === 'file') {
          this.notes.refuse(`${path}.source`, 'only base64 PDFs and text documents can be translated (the chat form cannot fetch a document)');
        }
        if (!source) return { type: 'other', raw: b };
        return {
          type: 'document',
          source,
          ...(typeof doc.title === 'string' ? { title: doc.title } : {}),
          ...(typeof doc.context === 'string' ? { context: doc.context } : {}),
        };
      }
      case 'search_result': {
        const result = b as Schemas['SearchResultBlockParam'];
        return { type: 'search_result', source: result.source, title: result.title, texts: result.content.map((t) => t.text) };
      }
      case 'tool_use': {
        const use = b as Schemas['ToolUseBlockParam'];
        return { type: 'tool_use', id: use.id, name: use.name, input: use.input };
      }
      case 'tool_result': {
        const result = b as Schemas['ToolResultBlockParam'];
        return {
          type: 'tool_result',
          toolUseId: result.tool_use_id,
          content: result.content === undefined ? [] : this.content(result.content, `${path}.content`),
          ...(result.is_error ? { isError: true } : {}),
        };
      }
      case 'thinking': {
        const thinking = b as Schemas['ThinkingBlockParam'];
        return { type: 'thinking', thinking: thinking.thinking, ...(thinking.signature ? { signature: thinking.signature } : {}) };
      }
      case 'redacted_thinking':
        return { type: 'redacted_thinking', data: (b as Schemas['RedactedThinkingBlockParam']).data };
      default:
        // Server tool calls and results belong to the upstream that ran them.
        this.notes.drop(`${b.type} blocks`);
        return { type: 'other', raw: b };
    }
  }
}

type MediaBlock = Schemas['ImageBlockParam'] | Schemas['DocumentBlockParam'];

function mediaSource(block: MediaBlock, content?: (c: string | readonly unknown[]) => CanonicalContent[]): (ImageSource | DocumentSource) | undefined {
  const source = block.source as Record<string, unknown> & { type: string };
  switch (source.type) {
    case 'base64': {
      const s = source as unknown as Schemas['Base64Source'];
      return { kind: 'base64', mediaType: s.media_type, data: s.data };
    }
    case 'url':
      return { kind: 'url', url: (source as unknown as Schemas['UrlSource']).url };
    case 'file':
      return { kind: 'file', fileId: (source as unknown as Schemas['FileSource']).file_id };
    case 'text':
      return content ? { kind: 'text', data: (source as unknown as Schemas['PlainTextSource']).data } : undefined;
    case 'content':
      return content ? { kind: 'content', content: content((source as unknown as Schemas['ContentBlockSource']).content) } : undefined;
    default:
      return undefined;
  }
}

function toolChoice(choice: Schemas['ToolChoice'] | undefined): CanonicalToolChoice | undefined {
  if (!choice) return undefined;
  const disableParallel = choice.disable_parallel_tool_use === true ? { disableParallel: true } : {};
  switch (choice.type) {
    case 'auto':
    case 'any':
      return { type: choice.type, ...disableParallel };
    case 'none':
      return { type: 'none' };
    case 'tool':
      return { type: 'tool', name: choice.name ?? '', ...disableParallel };
    default:
      return undefined;
  }
}

function tool(t: Schemas['Tool'], path: string, notes: Untranslated): CanonicalTool {
  if (t.cache_control != null) notes.drop('cache_control');
  const kind = t.type ?? 'custom';
  if (kind !== 'custom') notes.refuse(`${path}.type`, `the server tool "${kind}" runs on Anthropic upstreams only`);
  return {
    name: t.name,
    ...(t.description !== undefined ? { description: t.description } : {}),
    inputSchema: (t.input_schema ?? { type: 'object' }) as Record<string, unknown>,
    kind,
    raw: t,
  };
}

function outputFormat(format: Schemas['OutputFormat'] | null | undefined): OutputFormat | undefined {
  if (!format) return undefined;
  if (format.type === 'json_schema' && format.schema) return { type: 'json_schema', schema: format.schema };
  return undefined;
}

/** The canonical view of a Messages-form body (count_tokens bodies too: `maxTokens` 1, not streamed). */
export function decodeMessagesBody(body: CountTokensRequest, maxTokens: number, stream: boolean, headers: AnthropicHeaders = {}): CanonicalRequest {
  const notes = new Untranslated();
  notes.topLevel(body);
  const blocks = new BlockDecoder(notes);
  const messages: CanonicalMessage[] = body.messages.map((m, i) => ({ role: m.role, content: blocks.content(m.content, `messages.${i}.content`) }));
  const request: CanonicalRequest = { model: body.model, messages, maxTokens, stream };
  if (body.system !== undefined) {
    if (typeof body.system !== 'string' && body.system.some((b) => b.cache_control != null)) notes.drop('cache_control');
    const system = typeof body.system === 'string' ? body.system : textOf(body.system);
    if (system) request.system = system;
  }
  if (body.tools?.length) request.tools = body.tools.map((t, i) => tool(t, `tools.${i}`, notes));
  const choice = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  const thinking = body.thinking;
  if (thinking) {
    // `between_tools` (SDK 1.x) permits thinking between tool calls: adaptive.
    request.thinking =
      thinking.type === 'enabled'
        ? { type: 'enabled', ...(thinking.budget_tokens !== undefined ? { budgetTokens: thinking.budget_tokens } : {}) }
        : { type: thinking.type === 'disabled' ? 'disabled' : 'adaptive' };
  }
  const effort = body.output_config?.effort;
  if (typeof effort === 'string' && EFFORTS.has(effort)) request.effort = effort as Effort;
  const format = outputFormat(body.output_config?.format);
  if (format) request.outputFormat = format;
  request.source = {
    form: 'messages',
    body,
    ...(headers.version !== undefined ? { anthropicVersion: headers.version } : {}),
    ...(headers.beta !== undefined ? { anthropicBeta: headers.beta } : {}),
    untranslated: notes.result(),
  };
  return request;
}

export function decodeMessagesRequest(body: MessagesRequest, headers: AnthropicHeaders = {}): CanonicalRequest {
  const request = decodeMessagesBody(body, body.max_tokens, body.stream ?? false, headers);
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
