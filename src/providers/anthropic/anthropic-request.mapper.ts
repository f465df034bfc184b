// The request side of the Anthropic Messages API. A Messages-form call
// passes through: the caller's body goes upstream with only the fields the
// gateway owns changed. A call from another form is translated from the
// canonical request. Wire types are the official SDK's (type-only imports).
import type {
  ContentBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
  ToolChoice,
  ToolUnion,
} from '@anthropic-ai/sdk/resources/messages';
import type { CanonicalContent, CanonicalRequest, CanonicalToolChoice, RawObject } from '../../core/canonical';
import type { Deployment } from '../../core/catalog.types';
import { refuseUntranslated } from '../translation';

/** Anthropic refuses thinking budgets below this. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * The thinking budget and the max_tokens to send with it. Anthropic counts
 * thinking inside max_tokens and requires max_tokens > budget, so when the
 * budget would eat the caller's whole allowance the answer keeps its own
 * `maxTokens` on top of the budget.
 */
export function thinkingBudget(request: CanonicalRequest): { budgetTokens: number; maxTokens: number } {
  const max = request.maxTokens;
  const fallback = Math.min(Math.max(MIN_THINKING_BUDGET, Math.floor(max / 2)), max - 1);
  const budgetTokens = Math.max(MIN_THINKING_BUDGET, request.thinking?.budgetTokens ?? fallback);
  return { budgetTokens, maxTokens: max > budgetTokens ? max : budgetTokens + max };
}

/** Whether the gateway turns thinking on: the deployment forces it and the caller did not choose. */
export const forcesThinking = (request: CanonicalRequest, deployment: Deployment): boolean =>
  deployment.thinking && request.thinking === undefined;

/** Whether the body sent to `deployment` sets a thinking budget of the gateway's making (thinkingBudget). */
const setsThinkingBudget = (request: CanonicalRequest, deployment: Deployment): boolean =>
  forcesThinking(request, deployment) || (request.source?.form !== 'messages' && request.thinking?.type === 'enabled');

/**
 * The one output bound an Anthropic deployment is sent: the request's
 * max_tokens, or with a thinking budget the gateway sets (a forced one, or
 * another form's reasoning effort) the max_tokens that budget needs. A
 * Messages caller's own thinking budget is below its max_tokens already
 * (decodeMessagesRequest checks it; lowering keeps it there). The worst case
 * reserves exactly this, so what is reserved and what is sent cannot drift.
 */
export function anthropicMaxTokens(request: CanonicalRequest, deployment: Deployment): number {
  return setsThinkingBudget(request, deployment) ? thinkingBudget(request).maxTokens : request.maxTokens;
}

/**
 * The request body. SDK 1.x dropped the sampling parameters from its types as
 * newer models ignore them, but the API still takes them for the models that
 * honour them, so they are added back here.
 */
export type AnthropicRequestBody = MessageCreateParamsBase & { temperature?: number; top_p?: number; top_k?: number; output_config?: RawObject };

/**
 * The body for `POST /v1/messages`. `dropped` collects the caller's fields a
 * translation had to leave out (told to the caller in a header).
 */
export function anthropicBody(request: CanonicalRequest, deployment: Deployment, dropped: string[]): RawObject {
  if (request.source?.form === 'messages') return passThrough(request, deployment);
  if (request.source) {
    refuseUntranslated(request.source, 'anthropic');
    for (const field of request.source.untranslated.dropped) dropped.push(field);
  }
  return toAnthropicRequest(request, deployment, dropped) as unknown as RawObject;
}

/** A count_tokens body: the caller's own (model replaced), or the translated request without what counting does not take. */
export function countTokensBody(request: CanonicalRequest, deployment: Deployment): RawObject {
  if (request.source?.form === 'messages') return { ...request.source.body, model: deployment.model };
  const { max_tokens: _max, stream: _stream, ...body } = toAnthropicRequest(request, deployment);
  return body as unknown as RawObject;
}

/**
 * The caller's own body with only what the gateway owns changed: the model,
 * the thinking a deployment forces, and the output bound (the max_tokens
 * reserved for: the caller's, lowered, or what a forced budget needs).
 * Everything else, fields not invented yet included, goes as sent.
 */
function passThrough(request: CanonicalRequest, deployment: Deployment): RawObject {
  const body: RawObject = { ...request.source!.body, model: deployment.model, max_tokens: anthropicMaxTokens(request, deployment) };
  if (forcesThinking(request, deployment)) {
    body.thinking = { type: 'enabled', budget_tokens: thinkingBudget(request).budgetTokens };
    // With thinking on, Anthropic rejects temperature/top_k changes and top_p
    // below 0.95; the gateway turned it on, so it drops them rather than fail.
    delete body.temperature;
    delete body.top_k;
    if (typeof body.top_p === 'number' && body.top_p < 0.95) delete body.top_p;
  }
  return body;
}

/** A canonical request (from another protocol form) as a Messages API body. */
export function toAnthropicRequest(request: CanonicalRequest, deployment: Deployment, dropped: string[] = []): AnthropicRequestBody {
  const body: AnthropicRequestBody = {
    model: deployment.model,
    max_tokens: anthropicMaxTokens(request, deployment),
    messages: toMessages(request),
    stream: request.stream,
  };
  if (request.system !== undefined && request.system !== '') body.system = request.system;
  if (request.stopSequences?.length) body.stop_sequences = request.stopSequences;
  if (request.tools?.length) {
    body.tools = request.tools.map(
      (tool): ToolUnion => ({
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        input_schema: { type: 'object' as const, ...tool.inputSchema },
      }),
    );
  }
  if (request.toolChoice) body.tool_choice = toToolChoice(request.toolChoice);
  if (request.userId !== undefined) body.metadata = { user_id: request.userId };
  if (request.outputFormat) {
    const schema = request.outputFormat.type === 'json_schema' ? request.outputFormat.schema : { type: 'object' };
    body.output_config = { format: { type: 'json_schema', schema } };
  }
  if (setsThinkingBudget(request, deployment)) {
    body.thinking = { type: 'enabled', budget_tokens: thinkingBudget(request).budgetTokens };
    // With thinking on, Anthropic rejects temperature/top_k changes and top_p
    // below 0.95; dropping them beats failing the call.
    if (request.topP !== undefined && request.topP >= 0.95) body.top_p = request.topP;
    else if (request.topP !== undefined) dropped.push('top_p');
    if (request.temperature !== undefined) dropped.push('temperature');
  } else {
    if (request.temperature !== undefined) {
      // The chat form's temperature runs to 2, the Messages API's to 1.
      body.temperature = Math.min(1, request.temperature);
      if (request.temperature > 1) dropped.push('temperature above 1 (sent as 1)');
    }
    if (request.topP !== undefined) body.top_p = request.topP;
    if (request.topK !== undefined) body.top_k = request.topK;
  }
  return body;
}

function toMessages(request: CanonicalRequest): MessageParam[] {
  const messages: MessageParam[] = [];
  for (const message of request.messages) {
    const content = message.content.flatMap(toContentBlock);
    // A message left empty (only unsigned thinking) would be a 400 upstream.
    if (content.length === 0) continue;
    if (message.role === 'system') messages.push({ role: 'system', content: content.filter((c): c is TextBlockParam => c.type === 'text') });
    else messages.push({ role: message.role, content });
  }
  return messages;
}

function toContentBlock(block: CanonicalContent): ContentBlockParam[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: block.text }];
    case 'image': {
      const { source } = block;
      if (source.kind === 'base64') return [{ type: 'image', source: { type: 'base64', media_type: source.mediaType as ImageMediaType, data: source.data } }];
      if (source.kind === 'url') return [{ type: 'image', source: { type: 'url', url: source.url } }];
      return [{ type: 'image', source: { type: 'file', file_id: source.fileId } } as unknown as ContentBlockParam];
    }
    case 'document':
      return [documentBlock(block)];
    case 'search_result':
      return [
        {
          type: 'search_result',
          source: block.source,
          title: block.title,
          content: block.texts.map((text) => ({ type: 'text' as const, text })),
        },
      ];
    case 'tool_use':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input }];
    case 'tool_result':
      return [
        {
          type: 'tool_result',
          tool_use_id: block.toolUseId,
          content: block.content.flatMap(toContentBlock) as Extract<ContentBlockParam, { type: 'tool_result' }>['content'],
          ...(block.isError !== undefined ? { is_error: block.isError } : {}),
        },
      ];
    case 'thinking':
      // Anthropic verifies the signature of replayed thinking; thinking that
      // came from another upstream has none and would be refused.
      return block.signature ? [{ type: 'thinking', thinking: block.thinking, signature: block.signature }] : [];
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: block.data }];
    case 'other':
      return [block.raw as unknown as ContentBlockParam];
  }
}

function documentBlock(block: Extract<CanonicalContent, { type: 'document' }>): ContentBlockParam {
  const { source } = block;
  const extra = { ...(block.title !== undefined ? { title: block.title } : {}), ...(block.context !== undefined ? { context: block.context } : {}) };
  switch (source.kind) {
    case 'base64':
      return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: source.data }, ...extra };
    case 'text':
      return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: source.data }, ...extra };
    case 'url':
      return { type: 'document', source: { type: 'url', url: source.url }, ...extra };
    case 'content':
      return {
        type: 'document',
        source: { type: 'content', content: source.content.flatMap(toContentBlock) as Array<Extract<ContentBlockParam, { type: 'text' | 'image' }>> },
        ...extra,
      };
    case 'file':
      return { type: 'document', source: { type: 'file', file_id: source.fileId }, ...extra } as unknown as ContentBlockParam;
  }
}

type ImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

function toToolChoice(choice: CanonicalToolChoice): ToolChoice {
  const parallel = 'disableParallel' in choice && choice.disableParallel ? { disable_parallel_tool_use: true } : {};
  switch (choice.type) {
    case 'auto':
    case 'any':
      return { type: choice.type, ...parallel };
    case 'none':
      return { type: 'none' };
    case 'tool':
      return { type: 'tool', name: choice.name, ...parallel };
  }
}
