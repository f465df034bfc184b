// The two OpenAI forms' bodies, for the worst case (input-scan.ts): chat
// `web_search_options`, files and images by reference, predictions; Responses
// hosted tools, stored prompts and context, `max_tool_calls`, files, images,
// screenshots and generated images in the input items.
import { isObject } from '../core/json-edit';
import type { RawObject } from '../core/canonical';
import { InputScanner, positiveInteger, textBytes } from './input-scanner';
import { FILE_SEARCH_RESULT_TOKENS, type InputScan } from './input-scan.types';

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

class OpenAiScanner extends InputScanner {
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

export function scanChatBody(body: RawObject, scan: InputScan): void {
  new OpenAiScanner(scan).chatBody(body);
}

export function scanResponsesBody(body: RawObject, scan: InputScan): void {
  new OpenAiScanner(scan).responsesBody(body);
}
