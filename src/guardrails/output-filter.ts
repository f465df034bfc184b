// The streamed side of the guardrails. Upstream text arrives in arbitrary
// pieces, and a match may be split across any number of them. Text is
// released as soon as no match of a redact or block rule can still start in
// it: each detector names the earliest place in the tail where one could
// still be under way (`holdFrom`: the current digit run, e-mail local part,
// key prefix, or the longest suffix that begins a listed phrase), and only
// text from the earliest such place on is held. Ordinary prose goes out with
// the delta that brought it; a suspicious run is held until it completes
// (then it is masked, or the message is blocked) or ends without matching
// (then it goes out as it was). Flag rules change no text and hold nothing.
//
// Detectors read each text's view (text-view.ts: invisible chars dropped,
// look-alikes and escapes read as what they stand for); what is held,
// released and masked is the raw text behind it.
//
// A run still held when its text block ends is carried into the next block
// of the same kind (text after text, thinking after thinking): an address
// split across two blocks reads as one to a client that shows them together.
// The next event decides: a block of the same kind continues the text, and
// anything else (another kind of block, the end) ends it. A match across the
// boundary is masked in the block it starts in, and the rest of it is left
// out of the next one.
//
// Each detector's scan resumes at its own frontier: every match before it is
// known and final, and none crosses it. A push scans from there, never the
// whole accumulated text.
//
// An open-ended match (a PEM private key) is held from its BEGIN line until
// its END line arrives (then it is one match, however long) or the text ends
// (then the whole held tail is the match: fail closed).
//
// Events the gateway has no canonical form for carry text too. A streamed
// one (a hosted tool's code or arguments, `textStream`) is read like a text
// block; the strings of any other (a hosted tool's item, an event kind added
// later, an Anthropic server-tool block) are scanned whole as it passes, and
// a string seen before (the done event that repeats a streamed text) becomes
// what it became then, without counting its matches twice.
import { OPAQUE_KEYS } from '../data-plane/body-walk';
import type { CanonicalEvent } from '../data-plane/canonical';
import type { ActivePolicy } from './guardrail-policy';
import { editStrings } from './json-strings';
import { applyRedactions, readerText, scanText, wholeTextMatches, type ActiveDetector, type RuleMatch } from './text-scanner';
import { TextView } from './text-view';

/**
 * An open match is checked for its closing marker on every push, a scan of
 * the whole held tail. Past this many chars the filter stops looking and
 * holds the rest of the text as part of the match: no private key is this
 * long, and the checks stay linear in what is held.
 */
export const OPEN_MATCH_CHECK_LIMIT = 16_384;

/** Distinct strings of raw events remembered with what they became. */
const MEMO_LIMIT = 1024;

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

type TextKind = 'text_delta' | 'thinking_delta' | 'tool_input_delta' | 'raw_event';
type StreamEvent = Extract<CanonicalEvent, { type: 'raw_event' }>;

/** Where one block's text starts in a channel that continues across blocks. */
interface Segment {
  index: number;
  /** Absolute raw offset in the channel. */
  start: number;
}

/** A streamed text of an event kind the gateway does not know. */
interface RawStream {
  /** The latest event of the stream, its text left out: the form released pieces go out in. */
  event: StreamEvent;
  /** All its raw text, and what went out of it, for the event that repeats it whole. */
  whole: string;
  out: string;
}

/** One text as the detectors read it: a block's, or several blocks' of one kind in a row. */
interface Channel {
  kind: TextKind;
  segments: Segment[];
  view: TextView;
  /** Absolute raw offsets: what may be released, what was. */
  releasable: number;
  released: number;
  ended: boolean;
  /** Per active detector, the absolute view offset its next scan starts from. */
  frontiers: number[];
  /** Final `redact` matches (raw offsets) not yet wholly released. */
  redactions: RuleMatch[];
  stream?: RawStream;
}

/**
 * Output order is input order: text of a block (up to what had arrived by
 * then) and other events, of any type, queue up, and an event waits for the
 * text before it to be released, so e.g. a usage event never overtakes held
 * text.
 */
type Pending = { kind: 'text'; channel: Channel; index: number; end: number } | { kind: 'event'; event: CanonicalEvent };

export function createOutputFilter(detectors: readonly ActiveDetector[]): OutputFilter {
  return new StreamOutputFilter(detectors);
}

class StreamOutputFilter implements OutputFilter {
  private readonly hitCounts: Record<string, number> = {};
  private blockedBy: string | null = null;
  private readonly blocks = new Map<number, Channel>();
  /** Blocks whose block_start went out and whose block_stop has not. */
  private readonly openBlocks = new Set<number>();
  private pending: Pending[] = [];
  /** Indexes of the detectors whose matches change the text: only they hold text back. */
  private readonly holding: number[];
  /** The channel that began last: only it may carry into a next block (blocks that interleave do not continue each other). */
  private latest: Channel | null = null;
  /** A channel whose block ended while it held text, until the next event says whether a block of its kind continues it. */
  private carried: Channel | null = null;
  /** Strings of raw events scanned whole, and what they became. */
  private readonly memo = new Map<string, string>();

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
      case 'raw_event':
        if (event.textStream === undefined) this.queue(this.withScanned(event, 'data', event.data));
        else this.receiveStream(event);
        break;
      case 'raw_delta':
        this.queue(event.choice === undefined ? this.withScanned(event, 'delta', event.delta) : this.withScanned(this.withScanned(event, 'delta', event.delta), 'choice', event.choice));
        break;
      case 'block_start':
        this.blockStart(event);
        break;
      case 'block_stop':
        this.blockStop(event.index);
        this.queue(event);
        break;
      case 'message_stop':
        // No more text can come, whether or not upstream closed its blocks.
        this.finishAll();
        this.queue(event);
        break;
      default:
        this.queue(event);
    }
    return this.blockedBy !== null ? this.enterBlock() : this.drain();
  }

  end(): CanonicalEvent[] {
    if (this.blockedBy !== null) return [];
    this.finishAll();
    return this.blockedBy !== null ? this.enterBlock() : this.drain();
  }

  private queue(event: CanonicalEvent): void {
    this.pending.push({ kind: 'event', event });
  }

  private blockStart(event: Extract<CanonicalEvent, { type: 'block_start' }>): void {
    const carried = this.carried;
    if (carried !== null) {
      this.carried = null;
      const kind = event.block.type === 'text' ? 'text_delta' : event.block.type === 'thinking' ? 'thinking_delta' : null;
      if (carried.kind === kind) {
        carried.segments.push({ index: event.index, start: carried.view.rawLength });
        this.blocks.set(event.index, carried);
        this.latest = carried;
        this.queue(event);
        return;
      }
      this.finish(carried);
    }
    // A server tool's block (its query, its results) is text the client shows too.
    if (event.block.type === 'other') {
      const raw = this.scanRaw(event.block.raw);
      if (raw !== event.block.raw) {
        this.queue({ ...event, block: { ...event.block, raw } });
        return;
      }
    }
    this.queue(event);
  }

  private blockStop(index: number): void {
    const channel = this.blocks.get(index);
    if (channel === undefined || channel.ended) return;
    const continuable = channel.kind === 'text_delta' || channel.kind === 'thinking_delta';
    const last = channel.segments[channel.segments.length - 1] as Segment;
    if (continuable && channel === this.latest && last.index === index && channel.releasable < channel.view.rawLength) {
      if (this.carried !== null && this.carried !== channel) this.finish(this.carried);
      this.carried = channel;
      return;
    }
    this.finish(channel);
  }

  private finishAll(): void {
    for (const channel of this.blocks.values()) this.finish(channel);
    if (this.carried !== null) this.finish(this.carried);
    this.carried = null;
  }

  private channelFor(index: number, kind: TextKind): Channel {
    const known = this.blocks.get(index);
    if (this.carried !== null) {
      // Text of another block: the carried one was not continued.
      if (this.carried !== known) this.finish(this.carried);
      this.carried = null;
    }
    if (known !== undefined && !known.ended) return known;
    const channel: Channel = {
      kind,
      segments: [{ index, start: 0 }],
      view: new TextView(),
      releasable: 0,
      released: 0,
      ended: false,
      frontiers: this.detectors.map(() => 0),
      redactions: [],
    };
    this.blocks.set(index, channel);
    this.latest = channel;
    return channel;
  }

  private receive(index: number, kind: TextKind, text: string): void {
    if (text.length === 0) return;
    this.append(this.channelFor(index, kind), index, text);
  }

  /** A piece of a streamed text in an unknown event; the rest of the event is scanned as it is. */
  private receiveStream(event: StreamEvent): void {
    const { id, field } = event.textStream as NonNullable<StreamEvent['textStream']>;
    const piece = event.data[field];
    const { [field]: _piece, ...rest } = event.data;
    const form = { ...event, data: this.scanRaw(rest) };
    if (typeof piece !== 'string' || piece === '') {
      this.queue({ ...form, data: { ...form.data, [field]: piece } });
      return;
    }
    const channel = this.channelFor(id, 'raw_event');
    if (channel.stream === undefined) channel.stream = { event: form, whole: '', out: '' };
    else channel.stream.event = form;
    channel.stream.whole += piece;
    this.append(channel, id, piece);
  }

  private append(channel: Channel, index: number, text: string): void {
    channel.view.append(text);
    for (let i = 0; i < this.detectors.length && this.blockedBy === null; i++) this.advance(channel, i);
    this.updateReleasable(channel);
    const end = channel.view.rawLength;
    const last = this.pending.at(-1);
    if (last?.kind === 'text' && last.channel === channel && last.index === index) last.end = end;
    else this.pending.push({ kind: 'text', channel, index, end });
  }

  /**
   * Scans detector `i` from its frontier: matches that start before the
   * earliest place where one could still be under way are final (counted,
   * and kept for redaction); the frontier moves up to that place. A final
   * match hides whatever could start inside it, as in a whole-text scan, so
   * the search for the next open place resumes at its end.
   */
  private advance(channel: Channel, i: number): void {
    const { detector, policy } = this.detectors[i] as ActiveDetector;
    const { view } = channel;
    const text = readerText(detector, view);
    const base = view.base;
    const from = (channel.frontiers[i] as number) - base;
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
      this.decide(channel, detector.rule, policy, base + match.start, base + match.end);
      if (match.end > hold) hold = detector.holdFrom(text, match.end);
    }
    channel.frontiers[i] = base + wholeCodePoints(text, hold);
  }

  /** A final match at view offsets [start, end), masking the raw text from its first char's start to its last char's end (or to `rawEnd`). */
  private decide(channel: Channel, rule: string, policy: ActivePolicy, start: number, end: number, rawEnd?: number): void {
    this.count(rule, policy);
    if (policy !== 'redact') return;
    const { view } = channel;
    channel.redactions.push({ rule, policy, start: view.rawStart(start), end: rawEnd ?? view.rawEnd(end - 1) });
  }

  private count(rule: string, policy: ActivePolicy): void {
    this.hitCounts[rule] = (this.hitCounts[rule] ?? 0) + 1;
    if (policy === 'block' && this.blockedBy === null) this.blockedBy = rule;
  }

  /** Releasable up to the earliest frontier of a holding rule (and what is read), but never into a redaction or a surrogate pair. */
  private updateReleasable(channel: Channel): void {
    const { view } = channel;
    let frontier = view.length;
    for (const i of this.holding) frontier = Math.min(frontier, channel.frontiers[i] as number);
    let cut = frontier >= view.length ? view.readUpTo : view.rawStart(frontier);
    for (let moved = true; moved; ) {
      moved = false;
      for (const match of channel.redactions) {
        if (match.start < cut && match.end > cut) {
          cut = match.start;
          moved = true;
        }
      }
    }
    channel.releasable = Math.max(channel.released, view.rawBase + wholeCodePoints(view.raw, cut - view.rawBase));
  }

  /** The text has ended: what is left from each frontier is scanned as the end of a whole text. */
  private finish(channel: Channel): void {
    if (channel.ended) return;
    channel.ended = true;
    const { view } = channel;
    view.finish();
    for (let i = 0; i < this.detectors.length && this.blockedBy === null; i++) {
      const { detector, policy } = this.detectors[i] as ActiveDetector;
      const text = readerText(detector, view);
      const base = view.base;
      const from = (channel.frontiers[i] as number) - base;
      if (text.length - from > OPEN_MATCH_CHECK_LIMIT) {
        // The check limit was passed inside an open match: all of the held tail is the match.
        this.decide(channel, detector.rule, policy, base + from, view.length, view.rawLength);
      } else {
        for (const match of wholeTextMatches(detector, text, from)) this.decide(channel, detector.rule, policy, base + match.start, base + match.end);
      }
      channel.frontiers[i] = view.length;
    }
    channel.releasable = view.rawLength;
    this.rememberStream(channel);
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
      this.release(head.channel, head.index, head.end, out);
      if (head.channel.released < head.end) break;
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

  /** Where block `index`'s text ends in its channel (the next block's start), or Infinity. */
  private segmentEnd(channel: Channel, index: number): number {
    const { segments } = channel;
    for (let i = segments.length - 1; i > 0; i--) if ((segments[i - 1] as Segment).index === index) return (segments[i] as Segment).start;
    return Infinity;
  }

  private release(channel: Channel, index: number, upTo: number, out: CanonicalEvent[]): void {
    const { view } = channel;
    const blockEnd = this.segmentEnd(channel, index);
    let target = Math.min(upTo, channel.releasable);
    // An event queued inside a masked span goes out after the whole marker (within its own block).
    for (let moved = true; moved; ) {
      moved = false;
      for (const match of channel.redactions) {
        const past = Math.min(match.end, blockEnd);
        if (match.start < target && past > target) {
          target = past;
          moved = true;
        }
      }
    }
    // An event queued between the halves of a surrogate pair goes out after the pair.
    if (target < Math.min(channel.releasable, blockEnd) && isHighSurrogate(view.raw.charCodeAt(target - 1 - view.rawBase))) target++;
    if (target <= channel.released) return;
    const raw = view.raw.slice(channel.released - view.rawBase, target - view.rawBase);
    const text = channel.redactions.length === 0 ? raw : applyRedactions(raw, channel.redactions, channel.released);
    if (text !== '') out.push(this.textEvent(channel, index, text));
    channel.released = target;
    if (channel.redactions.length > 0) channel.redactions = channel.redactions.filter((match) => match.end > target);
    if (channel.stream !== undefined) {
      channel.stream.out += text;
      this.rememberStream(channel);
    }
    this.dropScannedText(channel);
  }

  /** Once a whole stream went out, an event that repeats its text whole (a hosted tool's done event, its item) gets what its pieces became. */
  private rememberStream(channel: Channel): void {
    const { stream } = channel;
    if (stream !== undefined && channel.ended && channel.released === channel.view.rawLength) this.remember(stream.whole, stream.out);
  }

  private textEvent(channel: Channel, index: number, text: string): CanonicalEvent {
    switch (channel.kind) {
      case 'tool_input_delta':
        return { type: 'tool_input_delta', index, partialJson: text };
      case 'raw_event': {
        const { event } = channel.stream as RawStream;
        const field = (event.textStream as NonNullable<StreamEvent['textStream']>).field;
        return { ...event, data: { ...event.data, [field]: text } };
      }
      default:
        return { type: channel.kind, index, text };
    }
  }

  /** Keeps the unreleased raw text and the view the detectors still scan from (one char before a frontier is lookbehind context). */
  private dropScannedText(channel: Channel): void {
    const { view } = channel;
    let keep = view.length;
    for (const frontier of channel.frontiers) keep = Math.min(keep, frontier - 1);
    view.trim(Math.max(keep, view.base), channel.released);
  }

  /** Drop the queued content, close what the client saw opened, keep metering events. */
  private enterBlock(): CanonicalEvent[] {
    const out: CanonicalEvent[] = [];
    for (const index of this.openBlocks) out.push({ type: 'block_stop', index });
    this.openBlocks.clear();
    for (const entry of this.pending) if (entry.kind === 'event') for (const event of afterBlock(entry.event)) out.push(event);
    this.pending = [];
    this.blocks.clear();
    this.carried = null;
    return out;
  }

  /** `event` with its `key` holding `value` scanned (the same event when nothing changed). */
  private withScanned<E extends CanonicalEvent, K extends keyof E & string>(event: E, key: K, value: E[K]): E {
    const scanned = this.scanRaw(value);
    return scanned === value ? event : { ...event, [key]: scanned };
  }

  /** Every string of a raw JSON value that is not under an opaque key, scanned whole. */
  private scanRaw<T>(value: T): T {
    return editStrings(value, (text) => this.scanRawText(text), OPAQUE_KEYS);
  }

  private scanRawText(text: string): string {
    if (this.blockedBy !== null || text.length === 0) return text;
    const known = this.memo.get(text);
    if (known !== undefined) return known;
    const matches = scanText(text, this.detectors);
    for (const match of matches) this.count(match.rule, match.policy);
    const out = matches.length === 0 ? text : applyRedactions(text, matches);
    this.remember(text, out);
    return out;
  }

  private remember(text: string, out: string): void {
    if (this.memo.size < MEMO_LIMIT) this.memo.set(text, out);
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

