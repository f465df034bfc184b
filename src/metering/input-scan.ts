// One pass over the caller's body (after input guardrails) that finds what
// the upstream can read beyond the body's own bytes (input-allowances.ts):
// hosted tools, files, images and stored prompts named by reference, built-in
// tool definitions, the features for which upstreams add instructions, and
// whether the call can write the prompt cache. It reads the body as the caller
// sent it, in its own form, so it sees what a translation would drop and what
// pass-through forwards alike: the worst case must hold whatever the upstream.
import { isObject } from '../data-plane/body-walk';
import type { CanonicalRequest, RawObject } from '../data-plane/canonical';
import type { AllowanceKind } from './input-allowances';

export interface InputScan {
  /** Inputs the prompt names by reference (images, files, definitions): read again on every sampling. */
  prompt: Partial<Record<AllowanceKind, number>>;
  /** Hosted tools whose results the upstream adds, by kind. */
  results: Partial<Record<AllowanceKind, number>>;
  /** Unknown parts that refer to a file, a URL or a stored id (each takes the largest allowance, on every sampling). */
  unknownPrompt: number;
  /** Unknown tool types (each takes the largest allowance, and may run on the upstream). */
  unknownResults: number;
  /** Results whose size the request bounds itself (web_fetch `max_uses` × `max_content_tokens`, …), in tokens. */
  provenResults: number;
  /** A tool runs on the upstream: it may sample again after each use, reading the prompt again. */
  hosted: boolean;
  /** The most hosted-tool uses the request allows (`max_uses`, `max_tool_calls`), or null when it states none. */
  statedUses: number | null;
  /** Tool search loads deferred definitions the body holds: up to the body again on each sampling. */
  searchesTools: boolean;
  /** Features for which an upstream adds instructions of its own: tools, structured output, citations. */
  instructions: number;
  /** The body can write the prompt cache (`cache_control`), and the longest TTL it asks for. */
  cacheWrite: 'none' | '5m' | '1h';
  /** Output tokens billed beyond max_tokens: a chat `prediction` (its rejected tokens bill as output). */
  extraOutput: number;
}

/** Tokens of a fetched page's wrapper (URL, title, retrieval time) beyond its `max_content_tokens`. */
export const FETCH_RESULT_OVERHEAD_TOKENS = 256;
/** One file_search result: a chunk of at most 4,096 tokens (OpenAI's largest) and its file name and attributes. */
export const FILE_SEARCH_RESULT_TOKENS = 4_096 + 64;

export function emptyScan(): InputScan {
  return {
    prompt: {},
    results: {},
    unknownPrompt: 0,
    unknownResults: 0,
    provenResults: 0,
    hosted: false,
    statedUses: null,
    searchesTools: false,
    instructions: 0,
    cacheWrite: 'none',
    extraOutput: 0,
  };
}

/**
 * Everything the request names that the upstream can read beyond the body.
 * A request without a caller body (built inside the gateway) names nothing
 * but its tools.
 */
export function scanInputs(request: CanonicalRequest): InputScan {
  const scan = emptyScan();
  const source = request.source;
  if (!source) {
    if (request.tools?.length) scan.instructions++;
    return scan;
  }
  const scanner = new Scanner(scan);
  switch (source.form) {
    case 'messages':
      scanner.messagesBody(source.body);
      break;
    case 'chat_completions':
      scanner.chatBody(source.body);
      break;
    case 'responses':
      scanner.responsesBody(source.body);
      break;
  }
  return scan;
}

/** `web_search_20250305` → `web_search`: Anthropic names its tool types by their kind and a date. */
const DATED_TOOL = /^([a-z_]+?)_\d{8}$/;
/** Keys that point at something the upstream fetches: URLs, file ids. */
const REFERENCE_KEY = /(^|_)(url|uri|urls|file_id|file_ids)$/;
const REFERENCE_VALUE = /^(https?|s3|gs):\/\//i;

/** Messages block kinds that hold everything they add in the body (results of server tools included). */
const MESSAGES_INLINE_BLOCKS = new Set([
  'text',
  'tool_use',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
  'tool_reference',
  'mcp_tool_use',
  'mcp_tool_result',
]);

/** Content parts of the two OpenAI forms that hold everything they add in the body. */
const OPENAI_INLINE_PARTS = new Set(['text', 'input_text', 'output_text', 'refusal', 'input_audio', 'summary_text', 'reasoning_text']);

/** Responses input items that hold everything they add in the body (messages and tool outputs are read part by part). */
const RESPONSES_INLINE_ITEMS = new Set([
  'function_call',
  'custom_tool_call',
  'reasoning',
  'web_search_call',
  'file_search_call',
  'computer_call',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'mcp_call',
  'compaction',
]);

class Scanner {
  constructor(private readonly scan: InputScan) {}

  private addPrompt(kind: AllowanceKind): void {
    this.scan.prompt[kind] = (this.scan.prompt[kind] ?? 0) + 1;
  }

  private addResults(kind: AllowanceKind): void {
    this.scan.results[kind] = (this.scan.results[kind] ?? 0) + 1;
  }

  /** A tool that runs on the upstream; `uses` is the most uses it allows (null: unbounded). */
  private hostedTool(uses: number | null): void {
    const scan = this.scan;
    // The uses add up while every hosted tool states a bound; one that states none leaves them unbounded.
    if (!scan.hosted) scan.statedUses = uses;
    else if (scan.statedUses !== null) scan.statedUses = uses === null ? null : scan.statedUses + uses;
    scan.hosted = true;
  }

  private unknownTool(): void {
    this.scan.unknownResults++;
    this.hostedTool(null);
  }

  /** An unknown part: only one that points outside the body can add input. */
  private unknownPart(part: unknown): void {
    if (refersOutside(part, 0)) this.scan.unknownPrompt++;
  }

  private cacheControl(value: unknown): void {
    if (!isObject(value)) return;
    if (value.ttl === '1h') this.scan.cacheWrite = '1h';
    else if (this.scan.cacheWrite === 'none') this.scan.cacheWrite = '5m';
  }

  // ── Messages ──────────────────────────────────────────────────────────

  messagesBody(body: RawObject): void {
    this.cacheControl(body.cache_control);
    if (Array.isArray(body.system)) for (const block of body.system) if (isObject(block)) this.cacheControl(block.cache_control);
    const tools = body.tools;
    if (Array.isArray(tools) && tools.length > 0) {
      this.scan.instructions++;
      for (const tool of tools) if (isObject(tool)) this.messagesTool(tool);
    }
    // Each MCP server's tool list and results are input (Anthropic's MCP connector).
    if (Array.isArray(body.mcp_servers)) {
      for (const server of body.mcp_servers) {
        if (!isObject(server)) continue;
        this.addResults('mcp');
        this.hostedTool(null);
      }
    }
    if (isObject(body.output_config) && body.output_config.format != null) this.scan.instructions++;
    let citations = false;
    const visit = (blocks: unknown): void => {
      if (!Array.isArray(blocks)) return;
      for (const block of blocks) {
        if (!isObject(block)) continue;
        this.cacheControl(block.cache_control);
        const type = block.type;
        if (typeof type === 'string' && MESSAGES_INLINE_BLOCKS.has(type)) continue;
        switch (type) {
          case 'image':
            this.addPrompt('image');
            break;
          case 'document': {
            if (isObject(block.citations) && block.citations.enabled === true) citations = true;
            const source = isObject(block.source) ? block.source : {};
            if (source.type === 'content') visit(source.content);
            else if (source.type !== 'text') this.addPrompt('document');
            break;
          }
          case 'search_result':
            if (isObject(block.citations) && block.citations.enabled === true) citations = true;
            break;
          case 'tool_result':
            visit(block.content);
            break;
          case 'container_upload':
            // A file put in the code-execution container, read back through the sandbox.
            this.addPrompt('document');
            break;
          default:
            this.unknownPart(block);
        }
      }
    };
    if (Array.isArray(body.messages)) for (const message of body.messages) if (isObject(message)) visit(message.content);
    if (citations) this.scan.instructions++;
  }

  private messagesTool(tool: RawObject): void {
    this.cacheControl(tool.cache_control);
    const type = tool.type;
    if (type === undefined || type === null || type === 'custom') return;
    const kind = typeof type === 'string' ? DATED_TOOL.exec(type)?.[1] : undefined;
    const maxUses = positiveInteger(tool.max_uses);
    switch (kind) {
      case 'web_search':
        this.addResults('web_search');
        this.hostedTool(maxUses);
        return;
      case 'web_fetch': {
        // Each fetch adds at most max_content_tokens (and its wrapper): with max_uses too, a bound the request proves.
        const perFetch = positiveInteger(tool.max_content_tokens);
        if (maxUses !== null && perFetch !== null) this.scan.provenResults += maxUses * (perFetch + FETCH_RESULT_OVERHEAD_TOKENS);
        else this.addResults('web_fetch');
        this.hostedTool(maxUses);
        return;
      }
      case 'code_execution':
        this.addResults('code_execution');
        this.hostedTool(null);
        return;
      case 'tool_search_tool_regex':
      case 'tool_search_tool_bm25':
        this.scan.searchesTools = true;
        this.hostedTool(null);
        return;
      case 'bash':
      case 'text_editor':
      case 'computer':
      case 'memory':
        this.addPrompt(kind);
        return;
      default:
        // The MCP connector's toolset names a server of `mcp_servers`, which carries the allowance.
        if (type === 'mcp_toolset') return;
        this.unknownTool();
    }
  }

  // ── Chat completions ──────────────────────────────────────────────────

  chatBody(body: RawObject): void {
    if (body.web_search_options != null) {
      this.addResults('web_search');
      this.hostedTool(null);
    }
    if (isObject(body.prediction)) this.scan.extraOutput += textBytes(body.prediction.content);
    const tools = body.tools;
    if (Array.isArray(tools) && tools.length > 0) {
      this.scan.instructions++;
      for (const tool of tools) if (isObject(tool) && tool.type !== 'function' && tool.type !== 'custom') this.unknownTool();
    }
    if (isObject(body.response_format) && body.response_format.type !== 'text') this.scan.instructions++;
    if (!Array.isArray(body.messages)) return;
    for (const message of body.messages) {
      if (!isObject(message)) continue;
      // An assistant turn's earlier audio answer, sent back by id.
      if (isObject(message.audio) && message.audio.id != null) this.scan.unknownPrompt++;
      const content = message.content;
      if (!Array.isArray(content)) continue;
      for (const part of content) if (isObject(part)) this.openAiPart(part);
    }
  }

  /** A content part of either OpenAI form (chat message content, Responses item content and tool outputs). */
  private openAiPart(part: RawObject): void {
    const type = part.type;
    if (typeof type === 'string' && OPENAI_INLINE_PARTS.has(type)) return;
    switch (type) {
      case 'image_url':
      case 'input_image':
        this.addPrompt('image');
        return;
      case 'file':
      case 'input_file':
        // By id or URL, or inline (a PDF costs by its pages, not its bytes).
        this.addPrompt('document');
        return;
      default:
        this.unknownPart(part);
    }
  }

  // ── Responses ─────────────────────────────────────────────────────────

  responsesBody(body: RawObject): void {
    const maxToolCalls = positiveInteger(body.max_tool_calls);
    if (isObject(body.prompt)) {
      this.addPrompt('prompt');
      // A template's variables may be files and images too.
      if (isObject(body.prompt.variables)) for (const value of Object.values(body.prompt.variables)) if (isObject(value)) this.openAiPart(value);
    }
    // Stored context the upstream (or the gateway's store) adds: until its size is known, the largest allowance.
    if (body.previous_response_id != null) this.scan.unknownPrompt++;
    if (body.conversation != null) this.scan.unknownPrompt++;
    const tools = body.tools;
    if (Array.isArray(tools) && tools.length > 0) {
      this.scan.instructions++;
      for (const tool of tools) if (isObject(tool)) this.responsesTool(tool, maxToolCalls);
    }
    if (isObject(body.text) && isObject(body.text.format) && body.text.format.type !== 'text') this.scan.instructions++;
    // max_tool_calls bounds every built-in tool call of the response together.
    if (this.scan.hosted && maxToolCalls !== null) this.scan.statedUses = maxToolCalls;
    if (!Array.isArray(body.input)) return;
    for (const item of body.input) if (isObject(item)) this.responsesItem(item);
  }

  private responsesTool(tool: RawObject, maxToolCalls: number | null): void {
    const type = typeof tool.type === 'string' ? tool.type : '';
    if (type === 'function' || type === 'custom' || type === 'namespace') return;
    if (type.startsWith('web_search')) {
      this.addResults('web_search');
      this.hostedTool(null);
      return;
    }
    switch (type) {
      case 'file_search': {
        const perSearch = positiveInteger(tool.max_num_results);
        if (perSearch !== null && maxToolCalls !== null) this.scan.provenResults += maxToolCalls * perSearch * FILE_SEARCH_RESULT_TOKENS;
        else this.addResults('file_search');
        this.hostedTool(null);
        return;
      }
      case 'mcp':
        this.addResults('mcp');
        this.hostedTool(null);
        return;
      case 'code_interpreter':
        this.addResults('code_execution');
        this.hostedTool(null);
        return;
      case 'image_generation':
        this.addResults('image_generation');
        this.hostedTool(null);
        return;
      case 'computer_use_preview':
      case 'computer':
        this.addPrompt('computer');
        return;
      case 'local_shell':
      case 'shell':
      case 'apply_patch':
        this.addPrompt('shell');
        return;
      default:
        this.unknownTool();
    }
  }

  private responsesItem(item: RawObject): void {
    const type = typeof item.type === 'string' ? item.type : 'message';
    if (RESPONSES_INLINE_ITEMS.has(type)) return;
    switch (type) {
      case 'message':
        this.openAiContent(item.content);
        return;
      case 'function_call_output':
      case 'custom_tool_call_output':
        this.openAiContent(item.output);
        return;
      case 'computer_call_output':
        // A screenshot, by URL, id or inline.
        this.addPrompt('image');
        return;
      case 'image_generation_call':
        if (item.result != null) this.addPrompt('image');
        return;
      case 'code_interpreter_call':
        if (Array.isArray(item.outputs)) for (const output of item.outputs) if (isObject(output) && output.type === 'image') this.addPrompt('image');
        return;
      case 'item_reference':
        // A stored item, resolved by the upstream or the gateway's store: its size is not in the body.
        this.scan.unknownPrompt++;
        return;
      default:
        this.unknownPart(item);
    }
  }

  private openAiContent(content: unknown): void {
    if (!Array.isArray(content)) return;
    for (const part of content) if (isObject(part)) this.openAiPart(part);
  }
}

function positiveInteger(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** UTF-8 bytes of a text, or of the texts of text parts: a bound on their tokens. */
function textBytes(content: unknown): number {
  if (typeof content === 'string') return Buffer.byteLength(content);
  if (!Array.isArray(content)) return 0;
  let bytes = 0;
  for (const part of content) if (isObject(part) && typeof part.text === 'string') bytes += Buffer.byteLength(part.text);
  return bytes;
}

/** Whether an unknown part points at something outside the body: a URL or file-id key, or a URL value, a few levels deep. */
function refersOutside(value: unknown, depth: number): boolean {
  if (depth > 4) return false;
  if (typeof value === 'string') return REFERENCE_VALUE.test(value);
  if (Array.isArray(value)) return value.some((item) => refersOutside(item, depth + 1));
  if (!isObject(value)) return false;
  for (const key in value) {
    const item = value[key];
    if (REFERENCE_KEY.test(key) && item != null && item !== '') return true;
    if (typeof item === 'object' && refersOutside(item, depth + 1)) return true;
    if (typeof item === 'string' && REFERENCE_VALUE.test(item)) return true;
  }
  return false;
}
