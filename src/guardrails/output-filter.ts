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
// Events the gateway has no canonical form for carry text too. A streamed
// one (a hosted tool's code or arguments, `textStream`) is read like a text
// block; the strings of any other (a hosted tool's item, an event kind added
// later, an Anthropic server-tool block) are scanned whole as it passes, and
// a string seen before (the done event that repeats a streamed text) becomes
// what it became then, without counting its matches twice.
import { OPAQUE_KEYS } from '../core/json-edit';
import type { CanonicalEvent } from '../core/canonical';
import type { ActivePolicy } from './guardrail-policy';
import { editStrings } from './json-strings';
import { TextChannel, type RawStream, type StreamEvent, type TextKind } from './text-channel';
import { applyRedactions, scanText, type ActiveDetector } from './text-scanner';

export { OPEN_MATCH_CHECK_LIMIT } from './text-channel';

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

/**
 * Output order is input order: text of a block (up to what had arrived by
 * then) and other events, of any type, queue up, and an event waits for the
 * text before it to be released, so e.g. a usage event never overtakes held
 * text.
 */
type Pending = { kind: 'text'; channel: TextChannel; index: number; end: number } | { kind: 'event'; event: CanonicalEvent };

export function createOutputFilter(detectors: readonly ActiveDetector[]): OutputFilter {
  return new StreamOutputFilter(detectors);
}

class StreamOutputFilter implements OutputFilter {
  private readonly hitCounts: Record<string, number> = {};
  private blockedBy: string | null = null;
  private readonly blocks = new Map<number, TextChannel>();
  /** Blocks whose block_start went out and whose block_stop has not. */
  private readonly openBlocks = new Set<number>();
  private pending: Pending[] = [];
  /** Indexes of the detectors whose matches change the text: only they hold text back. */
  private readonly holding: number[];
  /** The channel that began last: only it may carry into a next block (blocks that interleave do not continue each other). */
  private latest: TextChannel | null = null;
  /** A channel whose block ended while it held text, until the next event says whether a block of its kind continues it. */
  private carried: TextChannel | null = null;
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
        carried.continueWith(event.index);
        this.blocks.set(event.index, carried);
        this.latest = carried;
        this.queue(event);
        return;
      }
      carried.finish();
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
    if (continuable && channel === this.latest && channel.lastIndex === index && channel.holds) {
      if (this.carried !== null && this.carried !== channel) this.carried.finish();
      this.carried = channel;
      return;
    }
    this.finishText(channel);
  }

  private finishAll(): void {
    for (const channel of this.blocks.values()) this.finishText(channel);
    if (this.carried !== null) this.finishText(this.carried);
    this.carried = null;
  }

  private finishText(channel: TextChannel): void {
    channel.finish();
    this.rememberStream(channel);
  }

  private channelFor(index: number, kind: TextKind): TextChannel {
    const known = this.blocks.get(index);
    if (this.carried !== null) {
      // Text of another block: the carried one was not continued.
      if (this.carried !== known) this.carried.finish();
      this.carried = null;
    }
    if (known !== undefined && !known.ended) return known;
    const channel = new TextChannel(kind, index, this.detectors, this.holding, this);
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

  private append(channel: TextChannel, index: number, text: string): void {
    channel.append(text);
    const end = channel.view.rawLength;
    const last = this.pending.at(-1);
    if (last?.kind === 'text' && last.channel === channel && last.index === index) last.end = end;
    else this.pending.push({ kind: 'text', channel, index, end });
  }

  count(rule: string, policy: ActivePolicy): void {
    this.hitCounts[rule] = (this.hitCounts[rule] ?? 0) + 1;
    if (policy === 'block' && this.blockedBy === null) this.blockedBy = rule;
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

  private release(channel: TextChannel, index: number, upTo: number, out: CanonicalEvent[]): void {
    const text = channel.take(index, upTo);
    if (text === null) return;
    if (text !== '') out.push(this.textEvent(channel, index, text));
    if (channel.stream !== undefined) {
      channel.stream.out += text;
      this.rememberStream(channel);
    }
  }

  /** Once a whole stream went out, an event that repeats its text whole (a hosted tool's done event, its item) gets what its pieces became. */
  private rememberStream(channel: TextChannel): void {
    const { stream } = channel;
    if (stream !== undefined && channel.ended && channel.released === channel.view.rawLength) this.remember(stream.whole, stream.out);
  }

  private textEvent(channel: TextChannel, index: number, text: string): CanonicalEvent {
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

