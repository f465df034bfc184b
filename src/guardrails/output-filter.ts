// The streamed side of the guardrails. Upstream text arrives in arbitrary
// pieces; a match may be split across any number of them. Each content block
// keeps back its trailing `window` chars (longest bounded match - 1) and
// releases the rest, so a split match is always whole inside what is held.
// Each push only rescans, per detector, the tail where that detector's
// matches can still change, never the whole accumulated text.
//
// An open-ended match (a PEM private key) is the exception: once its opening
// marker is seen, everything from the marker on is held until the closing
// marker arrives (then it is one match, however long) or the block ends
// (then the whole held tail is the match: fail closed).
import type { CanonicalEvent } from '../data-plane/canonical';
import type { Detector } from './detector.types';
import type { ActivePolicy } from './guardrail-policy';
import { applyRedactions, type ActiveDetector, type RuleMatch } from './text-scanner';

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

interface TrackedMatch extends RuleMatch {
  /** The detector's maxMatchLength: once that much text follows `start`, the match cannot change. */
  maxLength: number;
  /** Final, counted, and its policy applied. */
  settled: boolean;
}

/** An open-ended match whose closing marker has not arrived: text from `start` on is held. */
interface OpenMatch {
  detector: Detector;
  policy: ActivePolicy;
  start: number;
}

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
  matches: TrackedMatch[];
  open: OpenMatch | null;
}

/**
 * Output order is input order: text of a block (up to what had arrived by
 * then) and other events queue up, and an event waits for the text before it
 * to be released, so e.g. a usage event never overtakes held text.
 */
type Pending = { kind: 'text'; index: number; end: number } | { kind: 'event'; event: CanonicalEvent };

export function createOutputFilter(detectors: readonly ActiveDetector[], window: number): OutputFilter {
  return new StreamOutputFilter(detectors, window);
}

class StreamOutputFilter implements OutputFilter {
  private readonly hitCounts: Record<string, number> = {};
  private blockedBy: string | null = null;
  private readonly blocks = new Map<number, BlockText>();
  /** Blocks whose block_start went out and whose block_stop has not. */
  private readonly openBlocks = new Set<number>();
  private pending: Pending[] = [];

  constructor(
    private readonly detectors: readonly ActiveDetector[],
    private readonly window: number,
  ) {}

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
      block = { index, type, text: '', base: 0, length: 0, releasable: 0, released: 0, ended: false, matches: [], open: null };
      this.blocks.set(index, block);
    }
    const previousLength = block.length;
    block.text += text;
    block.length += text.length;
    this.rescan(block, previousLength);
    this.trackOpenMatch(block, previousLength);
    this.settle(block);
    this.updateReleasable(block);
    const last = this.pending.at(-1);
    if (last?.kind === 'text' && last.index === index) last.end = block.length;
    else this.pending.push({ kind: 'text', index, end: block.length });
  }

  /**
   * A match starting at or after `previousLength - maxMatchLength` may have
   * been extended, cut short or not yet visible; those are dropped and found
   * again. Earlier ones are settled and kept. The scan starts one more
   * maxMatchLength (+1 for lookbehind) earlier, so that a spurious match at
   * the very start of the slice, where the lookbehind cannot see, ends before
   * the region that counts and cannot hide a real one. A match found inside
   * a kept match of the same rule is that match seen from its middle (a
   * token-like run in the body of a long private key) and is dropped.
   */
  private rescan(block: BlockText, previousLength: number): void {
    for (const { detector, policy } of this.detectors) {
      const maxLength = detector.maxMatchLength;
      const { acceptFrom, scanFrom } = rescanBounds(block, previousLength, maxLength);
      const found = detector.find(block.text.slice(scanFrom - block.base));
      if (block.matches.length > 0) {
        block.matches = block.matches.filter((match) => match.rule !== detector.rule || match.start < acceptFrom);
      }
      const kept = block.matches.filter((match) => match.rule === detector.rule && match.end > acceptFrom);
      for (const { start, end } of found) {
        if (scanFrom + start < acceptFrom) continue;
        if (kept.some((match) => scanFrom + start > match.start && scanFrom + start < match.end)) continue;
        block.matches.push({
          rule: detector.rule,
          policy,
          start: scanFrom + start,
          end: scanFrom + end,
          maxLength,
          settled: false,
        });
      }
    }
  }

  /**
   * Opens an open-ended match when a detector reports an opening marker
   * without its closing one in the rescanned tail; closes it (as one whole
   * match) once the closing marker is there.
   */
  private trackOpenMatch(block: BlockText, previousLength: number): void {
    const open = block.open;
    if (open === null) {
      block.open = this.findOpenMatch(block, previousLength);
      if (block.open?.policy === 'block') this.count(block.open.detector.rule, 'block');
      return;
    }
    if (block.length - open.start > OPEN_MATCH_CHECK_LIMIT) return;
    const held = block.text.slice(open.start - block.base);
    const stillOpen = open.detector.openMatchStart?.(held) ?? null;
    if (stillOpen === 0) return;
    const whole = open.detector.find(held)[0];
    // A detector that says the match is closed but cannot find it: keep holding (fail closed).
    if (whole === undefined || whole.start !== 0) return;
    const rule = open.detector.rule;
    const end = open.start + whole.end;
    block.matches = block.matches.filter((match) => match.rule !== rule || match.start < open.start || match.start >= end);
    block.matches.push({ rule, policy: open.policy, start: open.start, end, maxLength: open.detector.maxMatchLength, settled: false });
    // Another opening marker after this one's end, still unclosed.
    block.open = stillOpen === null ? null : { ...open, start: open.start + stillOpen };
  }

  /** The earliest unclosed opening marker in the tail this push rescanned, if any. */
  private findOpenMatch(block: BlockText, previousLength: number): OpenMatch | null {
    let earliest: OpenMatch | null = null;
    for (const { detector, policy } of this.detectors) {
      if (detector.openMatchStart === undefined) continue;
      const { scanFrom } = rescanBounds(block, previousLength, detector.maxMatchLength);
      const start = detector.openMatchStart(block.text.slice(scanFrom - block.base));
      if (start === null) continue;
      // The window holds any opening marker whole, so it cannot start in released text; clamp all the same.
      const absolute = Math.max(block.released, scanFrom + start);
      if (earliest === null || absolute < earliest.start) earliest = { detector, policy, start: absolute };
    }
    return earliest;
  }

  /** Whether a match is swallowed by the block's open match (and so neither counted nor redacted on its own). */
  private insideOpen(block: BlockText, match: TrackedMatch): boolean {
    return block.open !== null && match.rule === block.open.detector.rule && match.start >= block.open.start;
  }

  private count(rule: string, policy: ActivePolicy): void {
    this.hitCounts[rule] = (this.hitCounts[rule] ?? 0) + 1;
    if (policy === 'block' && this.blockedBy === null) this.blockedBy = rule;
  }

  private settle(block: BlockText): void {
    for (const match of block.matches) {
      if (match.settled || this.insideOpen(block, match) || (!block.ended && match.start >= block.length - match.maxLength)) continue;
      match.settled = true;
      this.count(match.rule, match.policy);
    }
  }

  /** Releasable up to the window, but never into a match that is unsettled or would be cut in two. */
  private updateReleasable(block: BlockText): void {
    let cut = Math.max(block.released, block.length - this.window);
    if (block.open !== null) cut = Math.min(cut, Math.max(block.released, block.open.start));
    for (let moved = true; moved; ) {
      moved = false;
      for (const match of block.matches) {
        if (match.start < cut && (match.end > cut || !match.settled) && match.start >= block.released) {
          cut = match.start;
          moved = true;
        }
      }
    }
    block.releasable = cut;
  }

  private finish(block: BlockText): void {
    block.ended = true;
    const open = block.open;
    if (open !== null) {
      // The block ended inside the open match: all of the held tail is the match.
      block.open = null;
      const rule = open.detector.rule;
      block.matches = block.matches.filter((match) => match.rule !== rule || match.start < open.start);
      // A blocking open match was counted, and ended the message, when it opened.
      if (open.policy !== 'block') {
        block.matches.push({ rule, policy: open.policy, start: open.start, end: block.length, maxLength: open.detector.maxMatchLength, settled: false });
      }
    }
    this.settle(block);
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
      for (const match of block.matches) {
        if (match.policy === 'redact' && match.start < target && match.end > target) {
          target = match.end;
          moved = true;
        }
      }
    }
    if (target <= block.released) return;
    const raw = block.text.slice(block.released - block.base, target - block.base);
    const text = block.matches.length === 0 ? raw : applyRedactions(raw, block.matches.filter((m) => m.start < target), block.released);
    out.push(textEvent(block.type, block.index, text));
    block.released = target;
    if (block.matches.length > 0) block.matches = block.matches.filter((match) => match.end > target || !match.settled);
    // Keep enough released text as left context for the next rescan; drop the rest in batches.
    const keepFrom = Math.min(block.released, block.length - 2 * this.window - 4);
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

/** Where a detector's matches may have changed since `previousLength` chars, and where to scan from to see them. */
function rescanBounds(block: BlockText, previousLength: number, maxLength: number): { acceptFrom: number; scanFrom: number } {
  const acceptFrom = Math.max(block.released, previousLength - maxLength);
  return { acceptFrom, scanFrom: Math.max(block.base, acceptFrom - maxLength - 1) };
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
