import type { Detector, DetectorMatch } from './detector.types';
import type { ActivePolicy } from './guardrail-policy';
import { viewOf, type TextView } from './text-view';

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

/** The view a detector reads: with look-alike letters read as Latin ones, or not. */
export function readerText(detector: Detector, view: TextView): string {
  return detector.lookalikes === true ? view.letters : view.text;
}

/**
 * One detector's matches in a whole text, from `from` on. An open-ended
 * match left unterminated runs to the end of the text and takes in the
 * detector's own later matches: the input check and a streamed block that
 * ends inside one see the same thing.
 */
export function wholeTextMatches(detector: Detector, text: string, from = 0): DetectorMatch[] {
  const found = detector.find(text, from);
  const open = detector.openMatchStart?.(text, from) ?? null;
  if (open === null) return found;
  const matches = found.filter((match) => match.start < open);
  matches.push({ start: open, end: text.length });
  return matches;
}

/**
 * Every match of every detector in `text`, in detector order, as spans of
 * `text`: detectors read its view, and a match covers the raw text its view
 * chars came from (from the first one's start to the last one's end).
 */
export function scanText(text: string, detectors: readonly ActiveDetector[]): RuleMatch[] {
  const view = viewOf(text);
  const matches: RuleMatch[] = [];
  for (const { detector, policy } of detectors) {
    if (view === null) {
      for (const { start, end } of wholeTextMatches(detector, text)) matches.push({ rule: detector.rule, policy, start, end });
      continue;
    }
    const read = readerText(detector, view);
    for (const { start, end } of wholeTextMatches(detector, read)) {
      matches.push({ rule: detector.rule, policy, start: view.rawStart(start), end: view.rawEnd(end - 1) });
    }
  }
  return matches;
}

/**
 * `text` with every `redact` match replaced by its marker. Overlapping
 * matches (an 18-digit ID that also passes Luhn) become one marker, named
 * after the earliest-starting, then longest, match, so the same text always
 * redacts the same way whether it was scanned whole or streamed in pieces.
 * `offset` is where `text` starts in the coordinates of `matches`. A text
 * released in pieces may cut a masked span only where one block ends and the
 * next begins: the marker goes out with the piece the span starts in, and the
 * rest of the span is left out of the pieces after it.
 */
export function applyRedactions(text: string, matches: readonly RuleMatch[], offset = 0): string {
  const spans = matches.filter((match) => match.policy === 'redact').sort((a, b) => a.start - b.start || b.end - a.end);
  if (spans.length === 0) return text;
  let result = '';
  let cursor = 0;
  let i = 0;
  while (i < spans.length) {
    const first = spans[i] as RuleMatch;
    let end = first.end;
    for (i++; i < spans.length && (spans[i] as RuleMatch).start < end; i++) end = Math.max(end, (spans[i] as RuleMatch).end);
    const start = first.start - offset;
    if (start >= text.length) break;
    if (end - offset <= cursor) continue;
    if (start >= 0) result += text.slice(cursor, start) + redactionMarker(first.rule);
    cursor = Math.min(end - offset, text.length);
  }
  return result + text.slice(cursor);
}
