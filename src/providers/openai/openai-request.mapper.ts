// The request side of OpenAI Chat Completions, as spoken by OpenAI and the
// compatible servers (DeepSeek, Qwen, vLLM, Ollama). A chat-form call passes
// through; a call from another form is translated from the canonical request.
// Wire types are the official SDK's (type-only imports).
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParams,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { CanonicalContent, CanonicalMessage, CanonicalRequest, CanonicalToolChoice, RawObject } from '../../core/canonical';
import type { Deployment } from '../../core/catalog.types';
import { refuseUntranslated } from '../translation';
import { isRecord } from '../upstream-http';

/**
 * The body for `POST {base_url}/chat/completions`. A chat-form call passes
 * through; a call from another form is translated, and `dropped` collects
 * the caller's fields the translation left out.
 */
export function openAiBody(request: CanonicalRequest, deployment: Deployment, dropped: string[]): RawObject {
  if (request.source?.form === 'chat_completions') return passThrough(request, deployment);
  if (request.source) {
    refuseUntranslated(request.source, 'openai');
    for (const field of request.source.untranslated.dropped) dropped.push(field);
  }
  return toOpenAiRequest(request, deployment, dropped) as unknown as RawObject;
}

/** The chat form's output-bound fields: the older name and the newer one. */
const OUTPUT_BOUNDS = ['max_tokens', 'max_completion_tokens'] as const;

/** Whether the gateway turns reasoning on: the deployment forces it and the caller did not choose. */
const forcesThinking = (request: CanonicalRequest, deployment: Deployment): boolean => deployment.thinking && request.thinking === undefined;

/**
 * The caller's own body with only what the gateway owns changed: the model;
 * usage in streams (without it a stream could not be billed; the caller still
 * gets the usage chunk only if it asked); the output bound; the reasoning a
 * deployment forces.
 *
 * One output bound (docs/architecture.md §9): the upstream is sent the max_tokens that was
 * reserved for, in every bound field the caller sent (`max_tokens`,
 * `max_completion_tokens`: the decoder refused two that disagree), so an
 * upstream that honours either stops at the same place; where the caller sent
 * none, in the one field the model takes (reasoning models only
 * `max_completion_tokens`).
 */
function passThrough(request: CanonicalRequest, deployment: Deployment): RawObject {
  const source = request.source!.body;
  const body: RawObject = { ...source, model: deployment.model };
  if (request.stream) body.stream_options = { ...(isRecord(source.stream_options) ? source.stream_options : {}), include_usage: true };
  let bounded = false;
  for (const key of OUTPUT_BOUNDS) {
    if (source[key] == null) continue;
    body[key] = request.maxTokens;
    bounded = true;
  }
  if (!bounded) body[reasoningEffort(request, deployment) !== undefined ? 'max_completion_tokens' : 'max_tokens'] = request.maxTokens;
  if (forcesThinking(request, deployment)) {
    // Reasoning models reject sampling parameters; the effort replaces them.
    body.reasoning_effort = 'high';
    delete body.temperature;
    delete body.top_p;
  }
  return body;
}

/** OpenAI's reasoning efforts; the Messages API's `xhigh` and `max` go as the highest of them. */
function reasoningEffort(request: CanonicalRequest, deployment: Deployment): string | undefined {
  const { thinking, effort } = request;
  if (thinking?.type === 'disabled') return undefined;
  if (effort !== undefined && effort !== 'none') return effort === 'xhigh' || effort === 'max' ? 'high' : effort;
  if (thinking?.type === 'enabled') {
    const budget = thinking.budgetTokens ?? 4096;
    return budget <= 2048 ? 'low' : budget <= 8192 ? 'medium' : 'high';
  }
  return forcesThinking(request, deployment) ? 'high' : undefined;
}

/** A canonical request (from another protocol form) as a chat-completions body. */
export function toOpenAiRequest(request: CanonicalRequest, deployment: Deployment, dropped: string[] = []): ChatCompletionCreateParams {
  const effort = reasoningEffort(request, deployment);
  const body: ChatCompletionCreateParams = {
    model: deployment.model,
    messages: toMessages(request),
    stream: request.stream,
  };
  // Reasoning models take only max_completion_tokens; compatible servers know max_tokens best.
  if (effort !== undefined) body.max_completion_tokens = request.maxTokens;
  else body.max_tokens = request.maxTokens;
  // Without include_usage a stream carries no token counts, and the call
  // could not be billed.
  if (request.stream) body.stream_options = { include_usage: true };
  if (effort !== undefined) {
    // Reasoning models reject sampling parameters; the effort replaces them.
    body.reasoning_effort = effort as ChatCompletionCreateParams['reasoning_effort'];
    if (request.temperature !== undefined) dropped.push('temperature');
    if (request.topP !== undefined) dropped.push('top_p');
  } else {
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.topP !== undefined) body.top_p = request.topP;
  }
  // top_k has no Chat Completions field; OpenAI refuses unknown parameters.
  if (request.stopSequences?.length) body.stop = request.stopSequences;
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function' as const,
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.inputSchema,
      },
    }));
  }
  if (request.toolChoice) {
    body.tool_choice = toToolChoice(request.toolChoice);
    if ('disableParallel' in request.toolChoice && request.toolChoice.disableParallel) body.parallel_tool_calls = false;
  }
  if (request.outputFormat?.type === 'json_schema') {
    const { schema, name, strict } = request.outputFormat;
    body.response_format = { type: 'json_schema', json_schema: { name: name ?? 'output', schema, ...(strict !== undefined ? { strict } : {}) } };
  } else if (request.outputFormat?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (request.userId !== undefined) body.user = request.userId;
  return body;
}

function toMessages(request: CanonicalRequest): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [];
  if (request.system !== undefined && request.system !== '') messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) {
    // One message per tool result: a conversation may hold more than a call can take as arguments, so no spread.
    if (message.role === 'user') for (const turn of userMessages(message)) messages.push(turn);
    else if (message.role === 'system') {
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n\n');
      if (text !== '') messages.push({ role: 'system', content: text });
    } else {
      const assistant = assistantMessage(message);
      if (assistant) messages.push(assistant);
    }
  }
  return messages;
}

/** Content parts for what a user (or a tool result) shows the model; parts the chat form cannot hold were refused at decode. */
function parts(blocks: readonly CanonicalContent[]): ChatCompletionContentPart[] {
  const out: ChatCompletionContentPart[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        out.push({ type: 'text', text: block.text });
        break;
      case 'image':
        if (block.source.kind === 'base64') out.push({ type: 'image_url', image_url: { url: `data:${block.source.mediaType};base64,${block.source.data}` } });
        else if (block.source.kind === 'url') out.push({ type: 'image_url', image_url: { url: block.source.url } });
        break;
      case 'document': {
        const { source } = block;
        const title = block.title !== undefined ? `${block.title}\n\n` : '';
        if (source.kind === 'base64') {
          out.push({ type: 'file', file: { file_data: `data:${source.mediaType};base64,${source.data}`, filename: block.title ?? 'document.pdf' } });
        } else if (source.kind === 'text') out.push({ type: 'text', text: `${title}${source.data}` });
        else if (source.kind === 'content') for (const part of parts(source.content)) out.push(part);
        break;
      }
      case 'search_result':
        out.push({ type: 'text', text: `${block.title}\n${block.source}\n\n${block.texts.join('\n\n')}` });
        break;
      default:
        break;
    }
  }
  return out;
}

/** Plain string content when there is only text: some compatible servers accept only strings for text-only messages. */
function contentOf(list: ChatCompletionContentPart[]): string | ChatCompletionContentPart[] {
  return list.every((part) => part.type === 'text') ? list.map((part) => (part.type === 'text' ? part.text : '')).join('\n') : list;
}

function userMessages(message: CanonicalMessage): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  // Tool results become `tool` messages, which must directly follow the
  // assistant message holding their tool_calls, so they go first. A tool
  // message holds text only: images a tool returned (Claude Code reading an
  // image file) follow in a user message.
  const shown: ChatCompletionContentPart[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_result') continue;
    const result = parts(block.content);
    const text = result.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
    out.push({ role: 'tool', tool_call_id: block.toolUseId, content: text });
    for (const part of result) if (part.type !== 'text') shown.push(part);
  }
  const own = shown;
  for (const part of parts(message.content.filter((block) => block.type !== 'tool_result'))) own.push(part);
  if (own.length > 0) out.push({ role: 'user', content: contentOf(own) as ChatCompletionContentPart[] });
  return out;
}

function assistantMessage(message: CanonicalMessage): ChatCompletionMessageParam | undefined {
  const texts: string[] = [];
  const toolCalls: ChatCompletionMessageToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
    // Thinking is not replayed: compatible servers reject or ignore it.
  }
  if (texts.length === 0 && toolCalls.length === 0) return undefined;
  return {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

function toToolChoice(choice: CanonicalToolChoice): ChatCompletionToolChoiceOption {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}
