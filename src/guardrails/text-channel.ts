// One streamed text as the detectors read it (output-filter.ts feeds it): a
// block's text, or several blocks' of one kind in a row, or the pieces of a
// text stream in unknown events. It keeps the text's view, each detector's
// frontier, the final redactions, and how much of the raw text may go out.
//
// Each detector's scan resumes at its own frontier: every match before it is
// known and final, and none crosses it. A push scans from there, never the
// whole accumulated text. An open-ended match (a PEM private key) is held
// from its BEGIN line until its END line arrives (then it is one match,
// however long) or the text ends (then the whole held tail is the match: fail
// closed).
import type { CanonicalEvent } from '../core/canonical';
import type { ActivePolicy } from './guardrail-policy';
import { applyRedactions, readerText, wholeTextMatches, type ActiveDetector, type RuleMatch } from './text-scanner';
import { TextView } from './text-view';

/**
 * An open match is checked for its closing marker on every push, a scan of
 * the whole held tail. Past this many chars the filter stops looking and
 * holds the rest of the text as part of the match: no private key is this
 * long, and the checks stay linear in what is held.
 */
export const OPEN_MATCH_CHECK_LIMIT = 16_384;

export type TextKind = 'text_delta' | 'thinking_delta' | 'tool_input_delta' | 'raw_event';
export type StreamEvent = Extract<CanonicalEvent, { type: 'raw_event' }>;

/** Where one block's text starts in a channel that continues across blocks. */
export interface Segment {
  index: number;
  /** Absolute raw offset in the channel. */
  start: number;
}

/** A streamed text of an event kind the gateway does not know. */
export interface RawStream {
  /** The latest event of the stream, its text left out: the form released pieces go out in. */
  event: StreamEvent;
  /** All its raw text, and what went out of it, for the event that repeats it whole. */
  whole: string;
  out: string;
}

/** Where a channel reports its final matches. */
export interface MatchSink {
  count(rule: string, policy: ActivePolicy): void;
  /** A block rule matched: scanning stops. */
  readonly blocked: string | null;
}

export class TextChannel {
  readonly segments: Segment[];
  readonly view = new TextView();
  /** Absolute raw offsets: what may be released, what was. */
  releasable = 0;
  released = 0;
  ended = false;
  stream?: RawStream;
  /** Per active detector, the absolute view offset its next scan starts from. */
  private readonly frontiers: number[];
  /** Final `redact` matches (raw offsets) not yet wholly released. */
  private redactions: RuleMatch[] = [];

  constructor(
    readonly kind: TextKind,
    index: number,
    private readonly detectors: readonly ActiveDetector[],
    /** Indexes of the detectors whose matches change the text: only they hold text back. */
    private readonly holding: readonly number[],
    private readonly sink: MatchSink,
  ) {
    this.segments = [{ index, start: 0 }];
    this.frontiers = detectors.map(() => 0);
  }

  /** Some received text may not go out yet. */
  get holds(): boolean {
    return this.releasable < this.view.rawLength;
  }

  /** Block `index` continues this text. */
  continueWith(index: number): void {
    this.segments.push({ index, start: this.view.rawLength });
  }

  /** The block whose text came last. */
  get lastIndex(): number {
    return (this.segments[this.segments.length - 1] as Segment).index;
  }

  append(text: string): void {
    this.view.append(text);
    for (let i = 0; i < this.detectors.length && this.sink.blocked === null; i++) this.advance(i);
    this.updateReleasable();
  }

  /** The text has ended: what is left from each frontier is scanned as the end of a whole text. */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    const { view } = this;
    view.finish();
    for (let i = 0; i < this.detectors.length && this.sink.blocked === null; i++) {
      const { detector, policy } = this.detectors[i] as ActiveDetector;
      const text = readerText(detector, view);
      const base = view.base;
      const from = (this.frontiers[i] as number) - base;
      if (text.length - from > OPEN_MATCH_CHECK_LIMIT) {
        // The check limit was passed inside an open match: all of the held tail is the match.
        this.decide(detector.rule, policy, base + from, view.length, view.rawLength);
      } else {
        for (const match of wholeTextMatches(detector, text, from)) this.decide(detector.rule, policy, base + match.start, base + match.end);
      }
      this.frontiers[i] = view.length;
    }
    this.releasable = view.rawLength;
  }

  /**
   * Releases block `index`'s text up to raw offset `upTo` as far as it may go,
   * masked; null when nothing more may go out yet. An event queued inside a
   * masked span goes out after the whole marker, but a block's text never
   * takes in the next block's: a span across the boundary is masked in the
   * block it starts in, and the rest of it is left out of the next.
   */
  take(index: number, upTo: number): string | null {
    const { view } = this;
    const blockEnd = this.segmentEnd(index);
    let target = Math.min(upTo, this.releasable);
    for (let moved = true; moved; ) {
      moved = false;
      for (const match of this.redactions) {
        const past = Math.min(match.end, blockEnd);
        if (match.start < target && past > target) {
          target = past;
          moved = true;
        }
      }
    }
    // An event queued between the halves of a surrogate pair goes out after the pair.
    if (target < Math.min(this.releasable, blockEnd) && isHighSurrogate(view.raw.charCodeAt(target - 1 - view.rawBase))) target++;
    if (target <= this.released) return null;
    const raw = view.raw.slice(this.released - view.rawBase, target - view.rawBase);
    const text = this.redactions.length === 0 ? raw : applyRedactions(raw, this.redactions, this.released);
    this.released = target;
    if (this.redactions.length > 0) this.redactions = this.redactions.filter((match) => match.end > target);
    this.dropScannedText();
    return text;
  }

  /**
   * Scans detector `i` from its frontier: matches that start before the
   * earliest place where one could still be under way are final (counted,
   * and kept for redaction); the frontier moves up to that place. A final
   * match hides whatever could start inside it, as in a whole-text scan, so
   * the search for the next open place resumes at its end.
   */
  private advance(i: number): void {
    const { detector, policy } = this.detectors[i] as ActiveDetector;
    const { view } = this;
    const text = readerText(detector, view);
    const base = view.base;
    const from = (this.frontiers[i] as number) - base;
    if (text.length - from > OPEN_MATCH_CHECK_LIMIT) return;
    if (detector.openMatchStart !== undefined) {
      const open = detector.openMatchStart(text, from);
      // Whatever follows an opening marker, the rule has matched.
      if (open !== null && policy === 'block') {
        this.sink.count(detector.rule, policy);
        return;
      }
      // Still waiting for the closing marker of the match the frontier is at.
      if (open === from) return;
    }
    const found = detector.find(text, from);
    let hold = detector.holdFrom(text, from);
    for (const match of found) {
      if (match.start >= hold) break;
      this.decide(detector.rule, policy, base + match.start, base + match.end);
      if (match.end > hold) hold = detector.holdFrom(text, match.end);
    }
    this.frontiers[i] = base + wholeCodePoints(text, hold);
  }

  /** A final match at view offsets [start, end), masking the raw text from its first char's start to its last char's end (or to `rawEnd`). */
  private decide(rule: string, policy: ActivePolicy, start: number, end: number, rawEnd?: number): void {
    this.sink.count(rule, policy);
    if (policy !== 'redact') return;
    this.redactions.push({ rule, policy, start: this.view.rawStart(start), end: rawEnd ?? this.view.rawEnd(end - 1) });
  }

  /** Releasable up to the earliest frontier of a holding rule (and what is read), but never into a redaction or a surrogate pair. */
  private updateReleasable(): void {
    const { view } = this;
    let frontier = view.length;
    for (const i of this.holding) frontier = Math.min(frontier, this.frontiers[i] as number);
    let cut = frontier >= view.length ? view.readUpTo : view.rawStart(frontier);
    for (let moved = true; moved; ) {
      moved = false;
      for (const match of this.redactions) {
        if (match.start < cut && match.end > cut) {
          cut = match.start;
          moved = true;
        }
      }
    }
    this.releasable = Math.max(this.released, view.rawBase + wholeCodePoints(view.raw, cut - view.rawBase));
  }

  /** Where block `index`'s text ends in this channel (the next block's start), or Infinity. */
  private segmentEnd(index: number): number {
    const { segments } = this;
    for (let i = segments.length - 1; i > 0; i--) if ((segments[i - 1] as Segment).index === index) return (segments[i] as Segment).start;
    return Infinity;
  }

  /** Keeps the unreleased raw text and the view the detectors still scan from (one char before a frontier is lookbehind context). */
  private dropScannedText(): void {
    const { view } = this;
    let keep = view.length;
    for (const frontier of this.frontiers) keep = Math.min(keep, frontier - 1);
    view.trim(Math.max(keep, view.base), this.released);
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** `offset`, or one less when it would cut a surrogate pair (its first half is the last char before it). */
function wholeCodePoints(text: string, offset: number): number {
  return offset > 0 && isHighSurrogate(text.charCodeAt(offset - 1)) ? offset - 1 : offset;
}
