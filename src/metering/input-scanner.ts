// What the form scanners (messages-input-scan.ts, openai-input-scan.ts)
// share: recording what a body names into an InputScan, and reading the
// bounds a request states. See input-scan.ts.
import { isObject } from '../core/json-edit';
import type { AllowanceKind } from '../core/input-allowances';
import type { InputScan } from './input-scan.types';

/** Keys that point at something the upstream fetches: URLs, file ids. */
const REFERENCE_KEY = /(^|_)(url|uri|urls|file_id|file_ids)$/;
const REFERENCE_VALUE = /^(https?|s3|gs):\/\//i;

export class InputScanner {
  constructor(protected readonly scan: InputScan) {}

  protected addPrompt(kind: AllowanceKind): void {
    this.scan.prompt[kind] = (this.scan.prompt[kind] ?? 0) + 1;
  }

  protected addResults(kind: AllowanceKind): void {
    this.scan.results[kind] = (this.scan.results[kind] ?? 0) + 1;
  }

  /** A tool that runs on the upstream; `uses` is the most uses it allows (null: unbounded). */
  protected hostedTool(uses: number | null): void {
    const scan = this.scan;
    // The uses add up while every hosted tool states a bound; one that states none leaves them unbounded.
    if (!scan.hosted) scan.statedUses = uses;
    else if (scan.statedUses !== null) scan.statedUses = uses === null ? null : scan.statedUses + uses;
    scan.hosted = true;
  }

  protected unknownTool(): void {
    this.scan.unknownResults++;
    this.hostedTool(null);
  }

  /** An unknown part: only one that points outside the body can add input. */
  protected unknownPart(part: unknown): void {
    if (refersOutside(part, 0)) this.scan.unknownPrompt++;
  }

  protected cacheControl(value: unknown): void {
    if (!isObject(value)) return;
    if (value.ttl === '1h') this.scan.cacheWrite = '1h';
    else if (this.scan.cacheWrite === 'none') this.scan.cacheWrite = '5m';
  }
}

export function positiveInteger(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** UTF-8 bytes of a text, or of the texts of text parts: a bound on their tokens. */
export function textBytes(content: unknown): number {
  if (typeof content === 'string') return Buffer.byteLength(content);
  if (!Array.isArray(content)) return 0;
  let bytes = 0;
  for (const part of content) if (isObject(part) && typeof part.text === 'string') bytes += Buffer.byteLength(part.text);
  return bytes;
}

/** Whether an unknown part points at something outside the body: a URL or file-id key, or a URL value, a few levels deep. */
function refersOutside(value: unknown, depth: number): boolean {
  if (depth > 4) return false;
  if (typeof value === 'string') return REFERENCE_VALUE.test(value);
  if (Array.isArray(value)) return value.some((item) => refersOutside(item, depth + 1));
  if (!isObject(value)) return false;
  for (const key in value) {
    const item = value[key];
    if (REFERENCE_KEY.test(key) && item != null && item !== '') return true;
    if (typeof item === 'object' && refersOutside(item, depth + 1)) return true;
    if (typeof item === 'string' && REFERENCE_VALUE.test(item)) return true;
  }
  return false;
}
