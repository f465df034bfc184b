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
 * Contract the streaming output filter relies on. It releases text as soon as
 * no match can still start in it, and resumes each detector's scan where the
 * last decided match ended, never rescanning the whole text:
 * - whether `[start, end)` matches may depend on at most one character either
 *   side of it (lookbehind / negative lookahead), and the end of the text
 *   counts as a boundary, so a match is reported as soon as its text is there;
 * - a candidate rejected by a check (checksum, date) does not hide a match
 *   starting inside it;
 * - `find(text, from)` returns what `find(text)` returns from `from` on,
 *   whenever no match of `find(text)` starts before `from` and ends after it;
 * - `holdFrom` never answers later than a position where `find` could, with
 *   more text, report a match that it does not report now or report it
 *   differently.
 */
export interface Detector {
  /** Stable rule name, used in policies, hit counts, errors and redaction markers. */
  rule: string;
  category: DetectorCategory;
  /**
   * Reads Cyrillic and Greek letters that look like Latin ones as those
   * Latin letters (see text-view.ts), so an address or key spelt with them
   * is still found. Only for detectors of Latin-only tokens: elsewhere (a
   * block list) it would read Russian or Greek words as Latin ones.
   */
  lookalikes?: boolean;
  /**
   * Every match starting at or after `from` (default 0), leftmost first, none
   * inside another; the text before `from` is only context (lookbehind). An
   * open-ended match is reported whole when its closing marker is in the
   * text, else as its opening marker alone.
   */
  find(text: string, from?: number): DetectorMatch[];
  /**
   * The earliest offset at or after `from` where a match could start that
   * more text could still complete, extend or cancel: the start of an
   * unfinished digit run, address, key or listed phrase, or of a complete one
   * that the next char could still change. `text.length` when there is none.
   * The streaming filter holds back text from there on and releases the rest.
   */
  holdFrom(text: string, from: number): number;
  /**
   * For detectors with open-ended matches (a PEM private key: a short BEGIN
   * line, then a body of any length up to its END line): the start of the
   * first opening marker at or after `from` that no closing marker follows,
   * or null. Whatever follows that start, to the end of the text, is treated
   * as part of the match: a key cut off mid-body is still a key (fail
   * closed). `holdFrom` answers that start until the closing marker arrives.
   */
  openMatchStart?(text: string, from?: number): number | null;
}
