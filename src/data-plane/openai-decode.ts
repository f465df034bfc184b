// What the two OpenAI forms (chat completions and responses) decode alike:
// the reasoning effort as a thinking request, images and files given as
// `data:` URLs, and turns merged so upstreams see alternating roles.
import { appError, invalid } from '../errors';
import { MAX_BODY_DEPTH, tooDeep } from '../http/openapi-router';
import type { CanonicalContent, CanonicalMessage, CanonicalRequest, Effort, ImageSource } from '../core/canonical';

/** Thinking budget per effort, when an effort becomes Anthropic thinking (a Map: the effort is the caller's text). */
const EFFORT_BUDGET = new Map<string, number>([
  ['minimal', 1024],
  ['low', 2048],
  ['medium', 4096],
  ['high', 8192],
  ['xhigh', 16384],
  ['max', 32768],
]);
const EFFORTS = new Set<string>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);

/**
 * An OpenAI reasoning effort (`reasoning_effort`, `reasoning.effort`) on the
 * canonical request: `none` never thinks; any other value is an explicit
 * thinking request, with a budget that leaves room for the answer.
 */
export function applyReasoningEffort(request: CanonicalRequest, effort: string | null | undefined): void {
  if (effort === 'none') {
    request.thinking = { type: 'disabled' };
    request.effort = 'none';
  } else if (typeof effort === 'string' && effort !== '') {
    const budget = Math.min(EFFORT_BUDGET.get(effort) ?? 4096, request.maxTokens - 1);
    request.thinking = budget >= 1024 ? { type: 'enabled', budgetTokens: budget } : { type: 'enabled' };
    if (EFFORTS.has(effort)) request.effort = effort as Effort;
  }
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** `data:<type>;base64,<data>` as its parts, or null for any other text. */
export function dataUrl(text: string): { mediaType: string; data: string } | null {
  const match = DATA_URL.exec(text);
  return match ? { mediaType: match[1]!, data: match[2]! } : null;
}

/** An image given as a URL: inline data (a `data:` URL) or an address. */
export function imageFromUrl(url: string): ImageSource {
  const data = dataUrl(url);
  return data ? { kind: 'base64', ...data } : { kind: 'url', url };
}

/** Appends content to the last message when it has the same role: upstreams want alternating turns. */
export function pushTurn(messages: CanonicalMessage[], role: CanonicalMessage['role'], content: CanonicalContent[]): void {
  const last = messages[messages.length - 1];
  // Item by item: a turn may hold more blocks than a call can take as arguments.
  if (last && last.role === role && role !== 'system') for (const block of content) last.content.push(block);
  else messages.push({ role, content });
}

/**
 * Tool-call arguments (JSON in a string) as a value: a 400 naming `field`
 * when they are not JSON, or nest deeper than a body may (the body's own
 * depth check cannot see inside a string, and what reads the value recurses).
 */
export function parseArguments(text: string, field: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(field, `${field}: must be a JSON object`);
  }
  if (tooDeep(value) !== undefined) {
    throw appError('bodyTooDeep', { field, max: MAX_BODY_DEPTH, what: 'JSON' }, { field });
  }
  return value;
}
