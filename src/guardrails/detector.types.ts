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
 * - no match is longer than `maxMatchLength`, except an open-ended match
 *   (see `openMatchStart`), whose opening marker is;
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
  /**
   * Longest text a bounded match (or an opening marker) can span, in chars:
   * what sizes the streaming hold-back window.
   */
  maxMatchLength: number;
  /**
   * Every match, leftmost first, none inside another. An open-ended match is
   * reported whole when its closing marker is in the text, else as its
   * opening marker alone.
   */
  find(text: string): DetectorMatch[];
  /**
   * For detectors with open-ended matches (a PEM private key: a short BEGIN
   * line, then a body of any length up to its END line): the start of the
   * first opening marker in `text` that no closing marker follows, or null.
   * Whatever follows that start, to the end of the text, is treated as part
   * of the match: a key cut off mid-body is still a key (fail closed). The
   * output filter holds text back from that start until the closing marker
   * arrives or the block ends, however long that is.
   */
  openMatchStart?(text: string): number | null;
}
