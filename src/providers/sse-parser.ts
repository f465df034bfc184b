// Server-sent events, as the WHATWG spec parses them, from a byte stream that
// may be cut anywhere: inside a multi-byte UTF-8 character, between `\r` and
// `\n`, inside a field name. Upstreams and proxies re-chunk freely, so the
// parser keeps every partial piece until the line it belongs to is complete.

export interface SseEvent {
  /** The `event:` field; absent when the event had none (OpenAI sends none). */
  event?: string;
  /** Every `data:` line of the event, joined with `\n`. */
  data: string;
  id?: string;
}

export class SseParser {
  // `stream: true` makes the decoder hold back an incomplete UTF-8 sequence
  // until its remaining bytes arrive, instead of emitting U+FFFD.
  private readonly decoder = new TextDecoder('utf-8');
  private partialLine = '';
  // A chunk that ends in `\r` may be followed by a chunk starting with `\n`;
  // the pair is one line break, not two (a second one would dispatch early).
  private afterCarriageReturn = false;
  private firstLine = true;
  private eventName: string | undefined;
  private dataLines: string[] = [];
  private lastId: string | undefined;

  /** Feeds the next bytes (or already decoded text); returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    return this.consume(text);
  }

  /**
   * Ends the stream. Per the spec an event not terminated by a blank line is
   * discarded, so a connection cut mid-event never yields half an event.
   */
  end(): SseEvent[] {
    const events = this.consume(this.decoder.decode());
    this.partialLine = '';
    this.eventName = undefined;
    this.dataLines = [];
    return events;
  }

  private consume(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.afterCarriageReturn && text.startsWith('\n')) start = 1;
    if (text.length > 0) this.afterCarriageReturn = false;
    for (let i = start; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      const line = this.partialLine + text.slice(start, i);
      this.partialLine = '';
      if (ch === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.afterCarriageReturn = true;
        }
      }
      start = i + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.partialLine += text.slice(start);
    return events;
  }

  private line(raw: string): SseEvent | undefined {
    let line = raw;
    if (this.firstLine) {
      this.firstLine = false;
      if (line.startsWith('\uFEFF')) line = line.slice(1);
    }
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventName = value;
        break;
      case 'data':
        this.dataLines.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        // `retry` and unknown fields carry nothing an upstream adapter uses.
        break;
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const name = this.eventName;
    const lines = this.dataLines;
    this.eventName = undefined;
    this.dataLines = [];
    // The spec drops events without data lines (e.g. a lone `event:` line).
    if (lines.length === 0) return undefined;
    const event: SseEvent = { data: lines.join('\n') };
    if (name !== undefined && name !== '') event.event = name;
    if (this.lastId !== undefined) event.id = this.lastId;
    return event;
  }
}

/** Parses a whole byte stream into events, chunk by chunk. */
export async function* parseSseStream(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  for await (const chunk of chunks) yield* parser.push(chunk);
  yield* parser.end();
}
