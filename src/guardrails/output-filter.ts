// The streamed side of the guardrails. Upstream text arrives in arbitrary
// pieces; a match may be split across any number of them. Each content block
// keeps back its trailing `window` chars (longest match - 1) and releases the
// rest, so a split match is always whole inside what is held. Each push only
// rescans, per detector, the tail where that detector's matches can still
// change, never the whole accumulated text.
import type { CanonicalEvent } from '../data-plane/canonical';
import { applyRedactions, type ActiveDetector, type RuleMatch } from './text-scanner';

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
      block = { index, type, text: '', base: 0, length: 0, releasable: 0, released: 0, ended: false, matches: [] };
      this.blocks.set(index, block);
    }
    const previousLength = block.length;
    block.text += text;
    block.length += text.length;
    this.rescan(block, previousLength);
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
   * the region that counts and cannot hide a real one.
   */
  private rescan(block: BlockText, previousLength: number): void {
    for (const { detector, policy } of this.detectors) {
      const maxLength = detector.maxMatchLength;
      const acceptFrom = Math.max(block.released, previousLength - maxLength);
      const scanFrom = Math.max(block.base, acceptFrom - maxLength - 1);
      const found = detector.find(block.text.slice(scanFrom - block.base));
      if (block.matches.length > 0) {
        block.matches = block.matches.filter((match) => match.rule !== detector.rule || match.start < acceptFrom);
      }
      for (const { start, end } of found) {
        if (scanFrom + start < acceptFrom) continue;
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

  private settle(block: BlockText): void {
    for (const match of block.matches) {
      if (match.settled || (!block.ended && match.start >= block.length - match.maxLength)) continue;
      match.settled = true;
      this.hitCounts[match.rule] = (this.hitCounts[match.rule] ?? 0) + 1;
      if (match.policy === 'block' && this.blockedBy === null) this.blockedBy = match.rule;
    }
  }

  /** Releasable up to the window, but never into a match that is unsettled or would be cut in two. */
  private updateReleasable(block: BlockText): void {
    let cut = Math.max(block.released, block.length - this.window);
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
