// What the built-in mock upstream answers, decided from the request alone:
// the same request always gets the same words, so tests and demos can rely on
// them. Timing, failures and the prefix cache live in mock.provider.ts.
import { createHash } from 'node:crypto';
import type { CanonicalMessage, CanonicalRequest, CanonicalTool, StopReason } from '../../core/canonical';
import type { Deployment } from '../../core/catalog.types';
import { countTokens, firstTokens } from '../../tokenizer';
import { contentTexts } from '../../core/canonical-text';

export interface MockToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface MockReply {
  thinking?: { text: string; signature: string };
  text: string;
  toolUse?: MockToolUse;
  stopReason: StopReason;
  stopSequence: string | null;
  /** Tokens of everything produced: thinking, text and tool input. */
  outputTokens: number;
}

/**
 * The prompt as one text, the way the mock counts and caches it. Thinking is
 * left out because Anthropic drops earlier turns' thinking from the context,
 * and images count as a marker, not their bytes.
 */
export function flattenPrompt(system: string | undefined, messages: readonly CanonicalMessage[]): string {
  const parts: string[] = [];
  if (system) parts.push(`system: ${system}`);
  for (const message of messages) {
    const pieces = message.content.flatMap((block) => {
      switch (block.type) {
        case 'image':
          return ['[image]'];
        case 'tool_use':
          return [`[tool_use ${block.name}] ${JSON.stringify(block.input ?? {})}`];
        case 'tool_result':
          return [`[tool_result] ${contentTexts(block.content).join('\n')}`];
        case 'thinking':
        case 'redacted_thinking':
          return [];
        case 'other':
          return [JSON.stringify(block.raw)];
        default:
          return contentTexts([block]);
      }
    });
    parts.push(`${message.role}: ${pieces.join('\n')}`);
  }
  return parts.join('\n\n');
}

export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function lastUserMessage(request: CanonicalRequest): CanonicalMessage | undefined {
  return request.messages.findLast((message) => message.role === 'user');
}

function textOf(message: CanonicalMessage | undefined): string {
  if (!message) return '';
  return message.content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * What the user last asked: the last text block of the last user message.
 * Agents put reminders and context before the ask in the same message
 * (Claude Code's <system-reminder> blocks), so the whole message would quote
 * those instead.
 */
function lastAsk(request: CanonicalRequest): string {
  const message = lastUserMessage(request);
  const last = message?.content.findLast((block) => block.type === 'text');
  return last?.type === 'text' ? last.text.replace(/\s+/g, ' ').trim() : textOf(message);
}

function snippet(text: string, chars: number): string {
  const points = Array.from(text);
  return points.length <= chars ? text : `${points.slice(0, chars).join('')}…`;
}

/** A tool the caller asked for, forced by tool_choice or named in the last user text. */
function chooseTool(request: CanonicalRequest, userText: string): CanonicalTool | undefined {
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  if (tools.length === 0 || choice?.type === 'none') return undefined;
  if (choice?.type === 'tool') return tools.find((tool) => tool.name === choice.name);
  const lower = userText.toLowerCase();
  const named = tools.find((tool) => lower.includes(tool.name.toLowerCase()));
  return named ?? (choice?.type === 'any' ? tools[0] : undefined);
}

/** Placeholder arguments that satisfy the required properties of a JSON schema. */
function sampleInput(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown; enum?: unknown }>;
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : Object.keys(properties);
  const input: Record<string, unknown> = {};
  for (const name of required) {
    if (typeof name !== 'string') continue;
    const property = Object.hasOwn(properties, name) ? (properties[name] ?? {}) : {};
    if (Array.isArray(property.enum) && property.enum.length > 0) input[name] = property.enum[0];
    else if (property.type === 'number' || property.type === 'integer') input[name] = 1;
    else if (property.type === 'boolean') input[name] = true;
    else if (property.type === 'array') input[name] = [];
    else if (property.type === 'object') input[name] = {};
    else input[name] = 'mock';
  }
  return input;
}

function composeText(request: CanonicalRequest, deployment: Deployment, tool: CanonicalTool | undefined): string {
  const last = request.messages.at(-1);
  const prefix = `Mock reply from ${deployment.model}:`;
  if (tool) return `${prefix} calling ${tool.name}.`;
  const toolResult = last?.role === 'user' ? last.content.find((block) => block.type === 'tool_result') : undefined;
  if (toolResult?.type === 'tool_result') {
    return `${prefix} received the tool result: ${snippet(contentTexts(toolResult.content).join(' '), 60)}. That completes the task.`;
  }
  return (
    `${prefix} ${snippet(lastAsk(request), 60)}\n\n` +
    'This answer comes from the built-in mock upstream, so no network was used. ' +
    'The same request always gets the same words. ' +
    `The conversation so far has ${request.messages.length} message${request.messages.length === 1 ? '' : 's'}.`
  );
}

function thinkingFor(request: CanonicalRequest): { text: string; signature: string } {
  const text =
    `The user asks about "${snippet(lastAsk(request), 40)}". ` +
    'Plan: restate the question, answer it briefly, stop.';
  return { text, signature: `mock-${hashText(text).slice(0, 32)}` };
}

/** The whole reply, already cut by stop sequences and max_tokens. */
export function planReply(request: CanonicalRequest, deployment: Deployment): MockReply {
  const tool = chooseTool(request, lastAsk(request));
  let text = composeText(request, deployment, tool);
  let toolUse: MockToolUse | undefined = tool
    ? {
        id: `toolu_mock_${hashText(flattenPrompt(request.system, request.messages)).slice(0, 20)}`,
        name: tool.name,
        input: sampleInput(tool.inputSchema),
      }
    : undefined;
  let stopReason: StopReason = toolUse ? 'tool_use' : 'end_turn';
  let stopSequence: string | null = null;

  for (const sequence of request.stopSequences ?? []) {
    const at = sequence === '' ? -1 : text.indexOf(sequence);
    if (at !== -1 && (stopSequence === null || at < text.indexOf(stopSequence))) {
      stopSequence = sequence;
    }
  }
  if (stopSequence !== null) {
    text = text.slice(0, text.indexOf(stopSequence));
    toolUse = undefined;
    stopReason = 'stop_sequence';
  }

  // max_tokens bounds all output, thinking first, as upstreams count it.
  let budget = request.maxTokens;
  // The caller's setting first: enabled thinks, disabled never; otherwise the deployment decides.
  const thinks = request.thinking?.type === 'enabled' || (deployment.thinking && request.thinking?.type !== 'disabled');
  let thinking = thinks ? thinkingFor(request) : undefined;
  let outputTokens = 0;
  if (thinking) {
    const tokens = countTokens(thinking.text);
    if (tokens >= budget) {
      thinking = { ...thinking, text: firstTokens(thinking.text, budget) };
      return { thinking, text: '', stopReason: 'max_tokens', stopSequence: null, outputTokens: budget };
    }
    budget -= tokens;
    outputTokens += tokens;
  }
  const textTokens = countTokens(text);
  if (textTokens > budget) {
    return {
      ...(thinking ? { thinking } : {}),
      text: firstTokens(text, budget),
      stopReason: 'max_tokens',
      stopSequence: null,
      outputTokens: outputTokens + budget,
    };
  }
  budget -= textTokens;
  outputTokens += textTokens;
  if (toolUse) {
    const toolTokens = countTokens(`${toolUse.name} ${JSON.stringify(toolUse.input)}`);
    if (toolTokens > budget) {
      return {
        ...(thinking ? { thinking } : {}),
        text,
        stopReason: 'max_tokens',
        stopSequence: null,
        outputTokens: outputTokens + budget,
      };
    }
    outputTokens += toolTokens;
  }
  return {
    ...(thinking ? { thinking } : {}),
    text,
    ...(toolUse ? { toolUse } : {}),
    stopReason,
    stopSequence,
    outputTokens,
  };
}

/** Splits text into pieces of at most `size` characters without splitting a surrogate pair. */
export function splitChunks(text: string, size: number): string[] {
  if (text === '') return [];
  const points = Array.from(text);
  const step = Math.max(1, Math.floor(size));
  const chunks: string[] = [];
  for (let i = 0; i < points.length; i += step) chunks.push(points.slice(i, i + step).join(''));
  return chunks;
}
