// The streamed side of the guardrails. Upstream text arrives in arbitrary
// pieces, and a match may be split across any number of them. A content block
// releases its text as soon as no match of a redact or block rule can still
// start in it: each detector names the earliest place in the tail where one
// could still be under way (`holdFrom`: the current digit run, e-mail local
// part, key prefix, or the longest suffix that begins a listed phrase), and
// only text from the earliest such place on is held. Ordinary prose goes out
// with the delta that brought it; a suspicious run is held until it completes
// (then it is masked, or the message is blocked) or ends without matching
// (then it goes out as it was). Flag rules change no text and hold nothing.
//
// Each detector's scan resumes at its own frontier: every match before it is
// known and final, and none crosses it. A push scans from there, never the
// whole accumulated text.
//
// An open-ended match (a PEM private key) is held from its BEGIN line until
// its END line arrives (then it is one match, however long) or the block ends
// (then the whole held tail is the match: fail closed).
import type { CanonicalEvent } from '../data-plane/canonical';
import type { ActivePolicy } from './guardrail-policy';
import { applyRedactions, wholeTextMatches, type ActiveDetector, type RuleMatch } from './text-scanner';

/**
 * An open match is checked for its closing marker on every push, a scan of
 * the whole held tail. Past this many chars the filter stops looking and
 * holds the rest of the block as part of the match: no private key is this
 * long, and the checks stay linear in what is held.
 */
export const OPEN_MATCH_CHECK_LIMIT = 16_384;

export interface OutputFilter {
  /** Feed one upstream event; returns the events to send on, in order. */
  push(event: CanonicalEvent): CanonicalEvent[];
  /** Upstream ended: releases whatever is still held. */
  end(): CanonicalEvent[];
  /** Matches per rule, each counted once. */
  readonly hits: Readonly<Record<string, number>>;
  /** The rule that ended the message, or null. */
  readonly blocked: string | null;
}

type TextEventType = 'text_delta' | 'thinking_delta' | 'tool_input_delta';

interface BlockText {
  index: number;
  type: TextEventType;
  /** Received text from absolute offset `base` on: what is held plus a tail of released text kept as scan context. */
  text: string;
  base: number;
  /** Absolute offsets: chars received, chars that may be released, chars released. */
  length: number;
  releasable: number;
  released: number;
  ended: boolean;
  /** Per active detector, the absolute offset its next scan starts from. */
  frontiers: number[];
  /** Final `redact` matches not yet wholly released. */
  redactions: RuleMatch[];
}

/**
 * Output order is input order: text of a block (up to what had arrived by
 * then) and other events, of any type, queue up, and an event waits for the
 * text before it to be released, so e.g. a usage event never overtakes held
 * text.
 */
type Pending = { kind: 'text'; index: number; end: number } | { kind: 'event'; event: CanonicalEvent };

export function createOutputFilter(detectors: readonly ActiveDetector[]): OutputFilter {
  return new StreamOutputFilter(detectors);
}

class StreamOutputFilter implements OutputFilter {
  private readonly hitCounts: Record<string, number> = {};
  private blockedBy: string | null = null;
  private readonly blocks = new Map<number, BlockText>();
  /** Blocks whose block_start went out and whose block_stop has not. */
  private readonly openBlocks = new Set<number>();
  private pending: Pending[] = [];
  /** Indexes of the detectors whose matches change the text: only they hold text back. */
  private readonly holding: number[];

  constructor(private readonly detectors: readonly ActiveDetector[]) {
    this.holding = detectors.flatMap(({ policy }, i) => (policy === 'flag' ? [] : [i]));
  }

  get hits(): Readonly<Record<string, number>> {
    return this.hitCounts;
  }

  get blocked(): string | null {
    return this.blockedBy;
  }

  push(event: CanonicalEvent): CanonicalEvent[] {
    if (this.blockedBy !== null) return afterBlock(event);
    switch (event.type) {
      case 'text_delta':
      case 'thinking_delta':
        this.receive(event.index, event.type, event.text);
        break;
      case 'tool_input_delta':
        this.receive(event.index, event.type, event.partialJson);
        break;
      case 'block_stop': {
        const block = this.blocks.get(event.index);
        if (block !== undefined) this.finish(block);
        this.pending.push({ kind: 'event', event });
        break;
      }
      case 'message_stop':
        // No more text can come, whether or not upstream closed its blocks.
        for (const block of this.blocks.values()) this.finish(block);
        this.pending.push({ kind: 'event', event });
        break;
      default:
        this.pending.push({ kind: 'event', event });
    }
    return this.blockedBy !== null ? this.enterBlock() : this.drain();
  }

  end(): CanonicalEvent[] {
    if (this.blockedBy !== null) return [];
    for (const block of this.blocks.values()) this.finish(block);
    return this.blockedBy !== null ? this.enterBlock() : this.drain();
  }

  private receive(index: number, type: TextEventType, text: string): void {
    if (text.length === 0) return;
    let block = this.blocks.get(index);
    if (block === undefined) {
      const frontiers = this.detectors.map(() => 0);
      block = { index, type, text: '', base: 0, length: 0, releasable: 0, released: 0, ended: false, frontiers, redactions: [] };
      this.blocks.set(index, block);
    }
    block.text += text;
    block.length += text.length;
    for (let i = 0; i < this.detectors.length && this.blockedBy === null; i++) this.advance(block, i);
    this.updateReleasable(block);
    const last = this.pending.at(-1);
    if (last?.kind === 'text' && last.index === index) last.end = block.length;
    else this.pending.push({ kind: 'text', index, end: block.length });
  }

  /**
   * Scans detector `i` from its frontier: matches that start before the
   * earliest place where one could still be under way are final (counted,
   * and kept for redaction); the frontier moves up to that place. A final
   * match hides whatever could start inside it, as in a whole-text scan, so
   * the search for the next open place resumes at its end.
   */
  private advance(block: BlockText, i: number): void {
    const { detector, policy } = this.detectors[i] as ActiveDetector;
    const { text, base } = block;
    const from = (block.frontiers[i] as number) - base;
    if (text.length - from > OPEN_MATCH_CHECK_LIMIT) return;
    if (detector.openMatchStart !== undefined) {
      const open = detector.openMatchStart(text, from);
      // Whatever follows an opening marker, the rule has matched.
      if (open !== null && policy === 'block') {
        this.count(detector.rule, policy);
        return;
      }
      // Still waiting for the closing marker of the match the frontier is at.
      if (open === from) return;
    }
    const found = detector.find(text, from);
    let hold = detector.holdFrom(text, from);
    for (const match of found) {
      if (match.start >= hold) break;
      this.decide(block, detector.rule, policy, base + match.start, base + match.end);
      if (match.end > hold) hold = detector.holdFrom(text, match.end);
    }
    block.frontiers[i] = base + wholeCodePoints(text, hold);
  }

  private decide(block: BlockText, rule: string, policy: ActivePolicy, start: number, end: number): void {
    this.count(rule, policy);
    if (policy === 'redact') block.redactions.push({ rule, policy, start, end });
  }

  private count(rule: string, policy: ActivePolicy): void {
    this.hitCounts[rule] = (this.hitCounts[rule] ?? 0) + 1;
    if (policy === 'block' && this.blockedBy === null) this.blockedBy = rule;
  }

  /** Releasable up to the earliest frontier of a holding rule, but never into a redaction or a surrogate pair. */
  private updateReleasable(block: BlockText): void {
    let cut = block.length;
    for (const i of this.holding) cut = Math.min(cut, block.frontiers[i] as number);
    for (let moved = true; moved; ) {
      moved = false;
      for (const match of block.redactions) {
        if (match.start < cut && match.end > cut) {
          cut = match.start;
          moved = true;
        }
      }
    }
    block.releasable = Math.max(block.released, block.base + wholeCodePoints(block.text, cut - block.base));
  }

  /** The block has ended: what is left from each frontier is scanned as the end of a whole text. */
  private finish(block: BlockText): void {
    block.ended = true;
    const { text, base } = block;
    for (let i = 0; i < this.detectors.length && this.blockedBy === null; i++) {
      const { detector, policy } = this.detectors[i] as ActiveDetector;
      const from = (block.frontiers[i] as number) - base;
      if (text.length - from > OPEN_MATCH_CHECK_LIMIT) {
        // The check limit was passed inside an open match: all of the held tail is the match.
        this.decide(block, detector.rule, policy, base + from, block.length);
      } else {
        for (const match of wholeTextMatches(detector, text, from)) this.decide(block, detector.rule, policy, base + match.start, base + match.end);
      }
      block.frontiers[i] = block.length;
    }
    block.releasable = block.length;
  }

  private drain(): CanonicalEvent[] {
    const out: CanonicalEvent[] = [];
    while (this.pending.length > 0) {
      const head = this.pending[0] as Pending;
      if (head.kind === 'event') {
        this.pending.shift();
        this.emit(head.event, out);
        continue;
      }
      const block = this.blocks.get(head.index);
      if (block !== undefined) {
        this.release(block, head.end, out);
        if (block.released < head.end) break;
      }
      this.pending.shift();
    }
    return out;
  }

  private emit(event: CanonicalEvent, out: CanonicalEvent[]): void {
    if (event.type === 'block_start') this.openBlocks.add(event.index);
    if (event.type === 'block_stop') {
      this.openBlocks.delete(event.index);
      this.blocks.delete(event.index);
    }
    out.push(event);
  }

  private release(block: BlockText, upTo: number, out: CanonicalEvent[]): void {
    let target = Math.min(upTo, block.releasable);
    // An event queued inside a redacted span goes out after the whole marker.
    for (let moved = true; moved; ) {
      moved = false;
      for (const match of block.redactions) {
        if (match.start < target && match.end > target) {
          target = match.end;
          moved = true;
        }
      }
    }
    // An event queued between the halves of a surrogate pair goes out after the pair.
    if (target < block.releasable && isHighSurrogate(block.text.charCodeAt(target - 1 - block.base))) target++;
    if (target <= block.released) return;
    const raw = block.text.slice(block.released - block.base, target - block.base);
    const text = block.redactions.length === 0 ? raw : applyRedactions(raw, block.redactions.filter((m) => m.start < target), block.released);
    out.push(textEvent(block.type, block.index, text));
    block.released = target;
    if (block.redactions.length > 0) block.redactions = block.redactions.filter((match) => match.end > target);
    this.dropScannedText(block);
  }

  /** Keeps the unreleased text and, before it, what the detectors still scan from; drops the rest in batches. */
  private dropScannedText(block: BlockText): void {
    let keepFrom = block.released;
    for (const frontier of block.frontiers) {
      // A detector past the check limit no longer reads its text (one char before a frontier is lookbehind context).
      if (block.length - frontier <= OPEN_MATCH_CHECK_LIMIT) keepFrom = Math.min(keepFrom, frontier - 1);
    }
    if (keepFrom - block.base > 1024) {
      block.text = block.text.slice(keepFrom - block.base);
      block.base = keepFrom;
    }
  }

  /** Drop the queued content, close what the client saw opened, keep metering events. */
  private enterBlock(): CanonicalEvent[] {
    const out: CanonicalEvent[] = [];
    for (const index of this.openBlocks) out.push({ type: 'block_stop', index });
    this.openBlocks.clear();
    for (const entry of this.pending) if (entry.kind === 'event') out.push(...afterBlock(entry.event));
    this.pending = [];
    this.blocks.clear();
    return out;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** `offset`, or one less when it would cut a surrogate pair (its first half is the last char before it). */
function wholeCodePoints(text: string, offset: number): number {
  return offset > 0 && isHighSurrogate(text.charCodeAt(offset - 1)) ? offset - 1 : offset;
}

function afterBlock(event: CanonicalEvent): CanonicalEvent[] {
  switch (event.type) {
    case 'message_start':
    case 'usage':
      return [event];
    case 'message_stop':
      return [{ type: 'message_stop', stopReason: 'refusal' }];
    default:
      return [];
  }
}

function textEvent(type: TextEventType, index: number, text: string): CanonicalEvent {
  return type === 'tool_input_delta' ? { type, index, partialJson: text } : { type, index, text };
}
