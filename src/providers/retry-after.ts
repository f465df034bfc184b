// How long an upstream's error reply asks to be left alone. Two headers say
// it: `retry-after` (RFC 9110: whole seconds or an HTTP-date; Anthropic sends
// seconds) and `retry-after-ms` (Azure OpenAI, and the convention the official
// SDKs read first). When both come, the longer wins: a deployment is never
// called again, and a client never sent back, sooner than either asked.
import type { IncomingHttpHeaders } from 'node:http';

const DECIMAL = /^\d+(?:\.\d+)?$/;

/** Milliseconds the upstream asked to wait, or undefined when it named no positive wait. */
export function retryAfterMs(headers: IncomingHttpHeaders, now: number = Date.now()): number | undefined {
  let wait: number | undefined;
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined && DECIMAL.test(ms)) wait = Number(ms);
  const after = first(headers['retry-after']);
  if (after !== undefined) {
    const asked = DECIMAL.test(after) ? Number(after) * 1000 : Date.parse(after) - now;
    if (Number.isFinite(asked) && (wait === undefined || asked > wait)) wait = asked;
  }
  return wait !== undefined && Number.isFinite(wait) && wait > 0 ? Math.ceil(wait) : undefined;
}

function first(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text?.trim();
}
