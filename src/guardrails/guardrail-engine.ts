// The guardrail pipeline: runs the detectors, applies each rule's policy.
// Detectors only find; everything about block / redact / flag lives here.
import { AppError, appError } from '../errors';
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

/**
 * The input side of one call. The data plane walks every text the upstream
 * will read (system blocks, messages of every role, tool results and inputs,
 * documents, blocks of kinds added later) in its own protocol's body and hands
 * each text here; guardrails never see a protocol's shape.
 */
export interface InputInspector {
  /** The text to send: the same string when nothing was redacted. Throws GuardrailBlockedError naming `field` on a block rule. */
  text(value: string, field: string): string;
  /**
   * A JSON value the model reads as data (tool input): every string leaf,
   * object key and long number, leaf by leaf so a redaction never breaks the
   * JSON (a card number stored as a number becomes a string marker). The
   * same value when nothing was redacted.
   */
  json(value: unknown, field: string): unknown;
  /** Matches per rule so far. */
  readonly hits: Record<string, number>;
}

export interface Guardrails {
  /** One per call: inspects the texts of its input (throws AppError `guardrail_blocked`, 400, when a `block` rule matches). */
  inputInspector(): InputInspector;
  /** One per streamed answer. */
  createOutputFilter(): OutputFilter;
}

export function createGuardrails({ detectors, policies }: GuardrailsOptions): Guardrails {
  const rules = new Set<string>();
  const active: ActiveDetector[] = [];
  for (const detector of detectors) {
    // Rules key policies, hit counts and the streaming rescan; two detectors under one name would corrupt all three.
    if (rules.has(detector.rule)) throw appError('guardrailRuleDuplicate', detector.rule);
    rules.add(detector.rule);
    const policy = policies[detector.rule] ?? DEFAULT_POLICY_BY_CATEGORY[detector.category];
    if (policy !== 'off') active.push({ detector, policy });
  }
  return {
    inputInspector: () => createInputInspector(active),
    createOutputFilter: () => createOutputFilter(active),
  };
}

/** Numbers shorter than this cannot hold any detector's match (the shortest is an 11-digit mobile number). */
const MIN_SCANNED_NUMBER_DIGITS = 7;

function createInputInspector(active: readonly ActiveDetector[]): InputInspector {
  const hits: Record<string, number> = {};

  const text = (value: string, field: string): string => {
    const matches = scanText(value, active);
    if (matches.length === 0) return value;
    for (const match of matches) hits[match.rule] = (hits[match.rule] ?? 0) + 1;
    const blocking = matches.find((match) => match.policy === 'block');
    if (blocking !== undefined) {
      // The message names the rule only: echoing the matched text would hand it back to the caller and into logs.
      throw new GuardrailBlockedError(blocking.rule, field);
    }
    return applyRedactions(value, matches);
  };

  const json = (value: unknown, field: string): unknown => {
    if (typeof value === 'string') return text(value, field);
    if (typeof value === 'number' && Number.isFinite(value)) {
      const digits = String(value);
      if (digits.length < MIN_SCANNED_NUMBER_DIGITS) return value;
      const redacted = text(digits, field);
      return redacted === digits ? value : redacted;
    }
    if (Array.isArray(value)) return sameOrCopy(value, value.map((item, i) => json(item, `${field}.${i}`)));
    if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      const inspected = entries.map(([key, item]): [string, unknown] => [text(key, field), json(item, `${field}.${key}`)]);
      const changed = inspected.some(([key, item], i) => key !== entries[i]?.[0] || item !== entries[i]?.[1]);
      return changed ? Object.fromEntries(inspected) : value;
    }
    return value;
  };

  return { text, json, hits };
}

/** The original array when every item is unchanged, so an untouched request is passed on as is. */
function sameOrCopy<T>(original: readonly T[], mapped: T[]): T[] {
  return mapped.every((item, i) => item === original[i]) ? (original as T[]) : mapped;
}
