// The detectors' view of a text (the rules of what reads as what are in
// text-reading.ts). Each view char remembers the raw span it came from, so a
// match in the view masks exactly the raw text a reader saw. Text that reads
// as itself (printable ASCII without "%" and "&", Chinese prose) is its own
// view: one regex test, nothing allocated.
import { LOOKALIKES, LOOKALIKE_SCRIPT, isLookalikeScript, isOwnScriptLetter, nextSpecial, readAt, type Reading } from './text-reading';

const LOOKALIKE_SCRIPT_ANYWHERE = new RegExp(LOOKALIKE_SCRIPT.source, 'g');

export { readsAsItself } from './text-reading';

/** Raw text is dropped in batches of at least this many chars. */
const TRIM_BATCH = 1024;

/**
 * The detectors' view of a text that arrives in pieces (a streamed block) or
 * whole. Offsets are absolute: from the start of the text, however much of
 * the front was dropped since.
 *
 * Until a char reads as something else, the view is the raw text itself (same
 * string, same offsets). From the first one on it is built beside it, as
 * spans: a run of raw chars read as themselves, or one raw sequence and what
 * it reads as. Invisible chars leave a gap between spans.
 */
export class TextView {
  /** Raw text from `rawBase` on: what was not released yet, and the tail not read yet. */
  raw = '';
  rawBase = 0;
  /** Absolute raw offset up to which the raw text is read; the rest could still become an escape. */
  private read = 0;
  private mapped = false;
  private viewText = '';
  private viewBase = 0;
  /** The `letters` view, from `viewBase` on; null while it equals the view. */
  private lettersText: string | null = null;
  /** Spans, from the first char that read differently: view start, raw start, raw length (-1: a run read as itself). */
  private readonly spanView: number[] = [];
  private readonly spanRaw: number[] = [];
  private readonly spanLength: number[] = [];
  /** Index of the first span still needed. */
  private firstSpan = 0;
  /**
   * The last view char is a Cyrillic or Greek letter read as itself: a
   * look-alike right after it is part of a Russian or Greek word ("почта")
   * and stays as it is. Only a look-alike that starts a word, or follows
   * Latin letters or other look-alikes ("јоhn", "АКІА", "PRІVATE"), reads as
   * Latin. Reading backwards only, a text in pieces reads as it does whole.
   */
  private inWord = false;
  /** readAt's answer, reused. */
  private readonly step: Reading = { text: null };

  /** Absolute offset where the view text starts. */
  get base(): number {
    return this.mapped ? this.viewBase : this.rawBase;
  }

  /** What detectors read, from `base` on. */
  get text(): string {
    if (this.mapped) return this.viewText;
    const read = this.read - this.rawBase;
    return read === this.raw.length ? this.raw : this.raw.slice(0, read);
  }

  /** The view with look-alike letters read as Latin ones: the same length and offsets. */
  get letters(): string {
    return this.lettersText ?? this.text;
  }

  /** Absolute end of the view. */
  get length(): number {
    return this.mapped ? this.viewBase + this.viewText.length : this.read;
  }

  /** Absolute end of the raw text. */
  get rawLength(): number {
    return this.rawBase + this.raw.length;
  }

  /** Absolute raw offset up to which the raw text has a view; what follows may still become an escape. */
  get readUpTo(): number {
    return this.read;
  }

  /** The view of a whole text, or null when the text is its own view (both views): nothing is allocated for it. */
  static of(text: string): TextView | null {
    const special = nextSpecial(text, 0);
    if (special === -1) return null;
    const view = new TextView();
    view.raw = text;
    view.read = special;
    view.readRaw(true);
    return view;
  }

  append(text: string): void {
    if (text.length === 0) return;
    const pending = this.read < this.rawLength;
    this.raw += text;
    if (!pending && !this.mapped && this.lettersText === null) {
      // The common case: text that reads as itself after text that did; what comes before its first special char needs no look.
      const special = nextSpecial(text, 0);
      if (special !== 0) this.inWord = false;
      if (special === -1) {
        this.read += text.length;
        return;
      }
      this.read += special;
    }
    this.readRaw(false);
  }

  /** No more text: an escape cut off at the end reads as itself. */
  finish(): void {
    this.readRaw(true);
  }

  /** Raw offset where the source of view char `k` starts; the view's end maps to the end of what was read. */
  rawStart(k: number): number {
    if (!this.mapped) return k;
    if (k >= this.length) return this.read;
    if (k < (this.spanView[this.firstSpan] ?? Infinity)) return k;
    const span = this.spanAt(k);
    const length = this.spanLength[span] as number;
    return (this.spanRaw[span] as number) + (length < 0 ? k - (this.spanView[span] as number) : 0);
  }

  /** Raw offset just after the source of view char `k`. */
  rawEnd(k: number): number {
    if (!this.mapped || k < (this.spanView[this.firstSpan] ?? Infinity)) return k + 1;
    const span = this.spanAt(k);
    const length = this.spanLength[span] as number;
    return length < 0 ? (this.spanRaw[span] as number) + k - (this.spanView[span] as number) + 1 : (this.spanRaw[span] as number) + length;
  }

  /**
   * Drops the view before `viewFrom` and the raw text before `rawFrom` (never
   * what is not read yet), in batches, so the copies stay linear overall.
   */
  trim(viewFrom: number, rawFrom: number): void {
    if (!this.mapped) {
      // One buffer serves both: keep what either still needs.
      const keep = Math.min(viewFrom, rawFrom, this.read) - this.rawBase;
      if (keep <= TRIM_BATCH) return;
      this.raw = this.raw.slice(keep);
      if (this.lettersText !== null) this.lettersText = this.lettersText.slice(keep);
      this.rawBase += keep;
      return;
    }
    const rawKeep = Math.min(rawFrom, this.read) - this.rawBase;
    if (rawKeep > TRIM_BATCH) {
      this.raw = this.raw.slice(rawKeep);
      this.rawBase += rawKeep;
    }
    const viewKeep = viewFrom - this.viewBase;
    if (viewKeep <= TRIM_BATCH) return;
    this.viewText = this.viewText.slice(viewKeep);
    if (this.lettersText !== null) this.lettersText = this.lettersText.slice(viewKeep);
    this.viewBase = viewFrom;
    while (this.firstSpan + 1 < this.spanView.length && (this.spanView[this.firstSpan + 1] as number) <= viewFrom) this.firstSpan++;
    if (this.firstSpan > TRIM_BATCH) {
      this.spanView.splice(0, this.firstSpan);
      this.spanRaw.splice(0, this.firstSpan);
      this.spanLength.splice(0, this.firstSpan);
      this.firstSpan = 0;
    }
  }

  /** The last span starting at or before view offset `k`. */
  private spanAt(k: number): number {
    let low = this.firstSpan;
    let high = this.spanView.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if ((this.spanView[middle] as number) <= k) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  private readRaw(final: boolean): void {
    const raw = this.raw;
    let i = this.read - this.rawBase;
    /** Start of the current run of chars read as themselves. */
    let run = i;
    let script = false;
    while (i < raw.length) {
      // Most chars read as themselves and are no look-alikes: runs of them are skipped in one regex step.
      const special = nextSpecial(raw, i);
      if (special === -1) {
        i = raw.length;
        break;
      }
      i = special;
      const length = readAt(raw, i, final, this.step);
      if (length === 0) break;
      const reading = this.step.text;
      if (reading === null) {
        if (!script && isLookalikeScript(raw.charCodeAt(i))) script = true;
      } else {
        this.keep(run, i, script);
        this.replace(i, length, reading);
        script = false;
        run = i + length;
      }
      i += length;
    }
    this.keep(run, i, script);
    this.read = this.rawBase + i;
  }

  /** Raw chars [from, to) (relative to `rawBase`) read as themselves; `script`: some may be look-alikes. */
  private keep(from: number, to: number, script: boolean): void {
    if (to <= from) return;
    if (!this.mapped) {
      // The view is the raw text; only `letters` may need the piece.
      if (script || this.lettersText !== null) this.addLetters(this.raw.slice(from, to), script, from);
      else this.inWord = false;
      return;
    }
    const piece = this.raw.slice(from, to);
    const at = this.length;
    const rawAt = this.rawBase + from;
    const last = this.spanView.length - 1;
    // A run right after a run, with no invisible char between them, is one run.
    const continues = last >= this.firstSpan && this.spanLength[last] === -1 && (this.spanRaw[last] as number) + at - (this.spanView[last] as number) === rawAt;
    if (!continues) {
      this.spanView.push(at);
      this.spanRaw.push(rawAt);
      this.spanLength.push(-1);
    }
    this.addLetters(piece, script, at - this.viewBase);
    this.viewText += piece;
  }

  /** The raw sequence at `from` (relative to `rawBase`), `length` long, reads as `text` ('' for an invisible char). */
  private replace(from: number, length: number, text: string): void {
    if (!this.mapped) {
      // Up to here the view is the raw text itself.
      this.mapped = true;
      this.viewText = this.raw.slice(0, from);
      this.viewBase = this.rawBase;
    }
    if (text === '') return;
    const at = this.length;
    this.spanView.push(at);
    this.spanRaw.push(this.rawBase + from);
    this.spanLength.push(length);
    this.addLetters(text, LOOKALIKE_SCRIPT.test(text), at - this.viewBase);
    this.viewText += text;
  }

  /** Keeps `letters` in step with `piece`, about to be added to the view at `at` (relative to the view's base). */
  private addLetters(piece: string, mayDiffer: boolean, at: number): void {
    const letters = mayDiffer ? this.lettersFor(piece) : piece;
    if (!mayDiffer) this.inWord = false;
    if (this.lettersText !== null) this.lettersText += letters;
    else if (letters !== piece) this.lettersText = (this.mapped ? this.viewText : this.raw).slice(0, at) + letters;
  }

  /** `piece` with the look-alikes that do not continue a Russian or Greek word read as Latin letters. */
  private lettersFor(piece: string): string {
    let out = '';
    let from = 0;
    /** Just after the last char of the script range looked at. */
    let after = 0;
    LOOKALIKE_SCRIPT_ANYWHERE.lastIndex = 0;
    while (LOOKALIKE_SCRIPT_ANYWHERE.test(piece)) {
      const i = LOOKALIKE_SCRIPT_ANYWHERE.lastIndex - 1;
      // Other chars since the last one: no word of that script goes on.
      if (i > after) this.inWord = false;
      after = i + 1;
      const code = piece.charCodeAt(i);
      const latin = LOOKALIKES.get(code);
      if (latin !== undefined && !this.inWord) {
        out += piece.slice(from, i) + latin;
        from = i + 1;
      } else {
        this.inWord = latin !== undefined || isOwnScriptLetter(code);
      }
    }
    if (after < piece.length) this.inWord = false;
    return from === 0 ? piece : out + piece.slice(from);
  }
}

/** The view of a whole text, or null when the text is its own view (both views). */
export function viewOf(text: string): TextView | null {
  return TextView.of(text);
}

/** What a text reads as to the detectors that read `letters` or not: for literals (block-list words) compared with it. */
export function readingOfText(text: string): string {
  return viewOf(text)?.text ?? text;
}
