// The guardrail pipeline: runs the detectors, applies each rule's policy.
// Detectors only find; everything about block / redact / flag lives here.
import type { CanonicalContent, CanonicalMessage, CanonicalRequest } from '../data-plane/canonical';
import { AppError } from '../errors';
import type { Detector } from './detector.types';
import { DEFAULT_POLICY_BY_CATEGORY, type GuardrailPolicy } from './guardrail-policy';
import { createOutputFilter, type OutputFilter } from './output-filter';
import { applyRedactions, scanText, type ActiveDetector } from './text-scanner';

/** A `block` rule matched the input: a 400 that names the rule (never the text) and tells metering which rule it was. */
export class GuardrailBlockedError extends AppError {
  constructor(
    readonly rule: string,
    field: string,
  ) {
    super('invalid_request', 'guardrail_blocked', `Request blocked by guardrail rule "${rule}"`, { field });
  }
}

export interface GuardrailsOptions {
  detectors: readonly Detector[];
  /** Per-rule policies; a rule without one gets its category default. */
  policies: Readonly<Partial<Record<string, GuardrailPolicy>>>;
}

export interface InputCheck {
  /** The request to send upstream: the input itself when nothing was redacted, else a redacted copy. */
  request: CanonicalRequest;
  hits: Record<string, number>;
}

export interface Guardrails {
  /** Throws AppError `guardrail_blocked` (400) when a `block` rule matches. */
  checkInput(request: CanonicalRequest): InputCheck;
  /** One per streamed answer. */
  createOutputFilter(): OutputFilter;
}

export function createGuardrails({ detectors, policies }: GuardrailsOptions): Guardrails {
  const rules = new Set<string>();
  const active: ActiveDetector[] = [];
  for (const detector of detectors) {
    // Rules key policies, hit counts and the streaming rescan; two detectors under one name would corrupt all three.
    if (rules.has(detector.rule)) throw new AppError('internal', 'guardrail_rule_duplicate', `Duplicate guardrail rule "${detector.rule}"`);
    rules.add(detector.rule);
    const policy = policies[detector.rule] ?? DEFAULT_POLICY_BY_CATEGORY[detector.category];
    if (policy !== 'off') active.push({ detector, policy });
  }
  return {
    checkInput: (request) => checkInput(request, active),
    createOutputFilter: () => createOutputFilter(active),
  };
}

type InputField = 'system' | 'messages';

/**
 * Scans the system prompt and every message's text, tool results and tool
 * inputs. Thinking blocks are left alone: they are signed by the upstream
 * and any change would make it reject the conversation.
 */
function checkInput(request: CanonicalRequest, active: readonly ActiveDetector[]): InputCheck {
  const hits: Record<string, number> = {};

  const inspect = (text: string, field: InputField): string => {
    const matches = scanText(text, active);
    if (matches.length === 0) return text;
    for (const match of matches) hits[match.rule] = (hits[match.rule] ?? 0) + 1;
    const blocking = matches.find((match) => match.policy === 'block');
    if (blocking !== undefined) {
      // The message names the rule only: echoing the matched text would hand it back to the caller and into logs.
      throw new GuardrailBlockedError(blocking.rule, field);
    }
    return applyRedactions(text, matches);
  };

  // Tool inputs are scanned leaf by leaf rather than as one JSON string, so a
  // redaction can never break the JSON (a card number stored as a number
  // becomes a string marker instead of invalid JSON).
  const inspectJson = (value: unknown): unknown => {
    if (typeof value === 'string') return inspect(value, 'messages');
    if (typeof value === 'number' && Number.isFinite(value)) {
      const text = String(value);
      const redacted = inspect(text, 'messages');
      return redacted === text ? value : redacted;
    }
    if (Array.isArray(value)) return sameOrCopy(value, value.map(inspectJson));
    if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      const inspected = entries.map(([key, item]): [string, unknown] => [inspect(key, 'messages'), inspectJson(item)]);
      const changed = inspected.some(([key, item], i) => key !== entries[i]?.[0] || item !== entries[i]?.[1]);
      return changed ? Object.fromEntries(inspected) : value;
    }
    return value;
  };

  const inspectContent = (content: CanonicalContent): CanonicalContent => {
    switch (content.type) {
      case 'text': {
        const text = inspect(content.text, 'messages');
        return text === content.text ? content : { ...content, text };
      }
      case 'tool_result': {
        const text = inspect(content.content, 'messages');
        return text === content.content ? content : { ...content, content: text };
      }
      case 'tool_use': {
        const input = inspectJson(content.input);
        return input === content.input ? content : { ...content, input };
      }
      case 'image':
      case 'thinking':
        return content;
    }
  };

  const system = request.system === undefined ? undefined : inspect(request.system, 'system');
  const messages = sameOrCopy(
    request.messages,
    request.messages.map((message): CanonicalMessage => {
      const content = sameOrCopy(message.content, message.content.map(inspectContent));
      return content === message.content ? message : { ...message, content };
    }),
  );
  if (system === request.system && messages === request.messages) return { request, hits };
  const copy: CanonicalRequest = { ...request, messages };
  if (system !== undefined) copy.system = system;
  return { request: copy, hits };
}

/** The original array when every item is unchanged, so an untouched request is passed on as is. */
function sameOrCopy<T>(original: readonly T[], mapped: T[]): T[] {
  return mapped.every((item, i) => item === original[i]) ? (original as T[]) : mapped;
}
