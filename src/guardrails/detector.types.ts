// A detector only finds; it never decides what happens to a match. The
// policy (block / redact / flag) lives with the pipeline, so one detector
// serves the input check and the streamed output filter alike.

export type DetectorCategory = 'pii' | 'secret' | 'injection' | 'blocklist';

/** A half-open range `[start, end)` of UTF-16 offsets into the scanned text. */
export interface DetectorMatch {
  start: number;
  end: number;
}

/**
 * Contract the streaming output filter relies on (it rescans only the tail of
 * a growing text, never the whole of it):
 * - no match is longer than `maxMatchLength`;
 * - whether `[start, end)` matches may depend on at most one character either
 *   side of it (lookbehind / negative lookahead), and the end of the text
 *   counts as a boundary, so a match is reported as soon as its text is there;
 * - a candidate rejected by a check (checksum, date) does not hide a match
 *   starting inside it.
 */
export interface Detector {
  /** Stable rule name, used in policies, hit counts, errors and redaction markers. */
  rule: string;
  category: DetectorCategory;
  /** Longest text a match can span, in chars. */
  maxMatchLength: number;
  find(text: string): DetectorMatch[];
}
