import type { Detector } from './detector.types';
import type { ActivePolicy } from './guardrail-policy';

/** A detector together with the policy in force for its rule. */
export interface ActiveDetector {
  detector: Detector;
  policy: ActivePolicy;
}

/** A match tagged with its rule and policy; offsets may be relative to a longer text. */
export interface RuleMatch {
  rule: string;
  policy: ActivePolicy;
  start: number;
  end: number;
}

export function redactionMarker(rule: string): string {
  return `[REDACTED:${rule}]`;
}

/**
 * Every match of every detector in `text`, in detector order. An open-ended
 * match left unterminated runs to the end of the text and takes in the
 * detector's own later matches, as the output filter does with a block that
 * ends inside one.
 */
export function scanText(text: string, detectors: readonly ActiveDetector[]): RuleMatch[] {
  const matches: RuleMatch[] = [];
  for (const { detector, policy } of detectors) {
    const open = detector.openMatchStart?.(text) ?? null;
    for (const { start, end } of detector.find(text)) {
      if (open === null || start < open) matches.push({ rule: detector.rule, policy, start, end });
    }
    if (open !== null) matches.push({ rule: detector.rule, policy, start: open, end: text.length });
  }
  return matches;
}

/**
 * `text` with every `redact` match replaced by its marker. Overlapping
 * matches (an 18-digit ID that also passes Luhn) become one marker, named
 * after the earliest-starting, then longest, match, so the same text always
 * redacts the same way whether it was scanned whole or streamed in pieces.
 * `offset` is where `text` starts in the coordinates of `matches`; the
 * caller guarantees no redacted match crosses either end of `text`.
 */
export function applyRedactions(text: string, matches: readonly RuleMatch[], offset = 0): string {
  const spans = matches
    .filter((match) => match.policy === 'redact')
    .sort((a, b) => a.start - b.start || b.end - a.end);
  if (spans.length === 0) return text;
  let result = '';
  let cursor = 0;
  let i = 0;
  while (i < spans.length) {
    const first = spans[i] as RuleMatch;
    let end = first.end;
    for (i++; i < spans.length && (spans[i] as RuleMatch).start < end; i++) {
      end = Math.max(end, (spans[i] as RuleMatch).end);
    }
    result += text.slice(cursor, first.start - offset) + redactionMarker(first.rule);
    cursor = end - offset;
  }
  return result + text.slice(cursor);
}
