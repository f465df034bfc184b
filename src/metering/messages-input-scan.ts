// The Messages form's body, for the worst case (input-scan.ts): server tools,
// MCP servers, Anthropic-defined client tools, images and documents by
// reference, container uploads, citations, structured output and
// `cache_control` breakpoints.
import { isObject } from '../core/json-edit';
import type { RawObject } from '../core/canonical';
import { InputScanner, positiveInteger } from './input-scanner';
import { FETCH_RESULT_OVERHEAD_TOKENS, type InputScan } from './input-scan.types';

/** `web_search_20250305` → `web_search`: Anthropic names its tool types by their kind and a date. */
const DATED_TOOL = /^([a-z_]+?)_\d{8}$/;
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

class MessagesScanner extends InputScanner {
  body(body: RawObject): void {
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
}

export function scanMessagesBody(body: RawObject, scan: InputScan): void {
  new MessagesScanner(scan).body(body);
}
