import pino, { type Logger, type LoggerOptions } from 'pino';

// Secrets and prompt text never reach the logs: credentials are censored by
// key name, and request bodies are never logged at all.

/** Keys censored at the top of a log object and one level down (`err.token`, `body.api_key`). */
const SECRET_KEYS: ReadonlySet<string> = new Set(['api_key', 'apiKey', 'secret', 'password', 'token']);
/** Keys censored in a `headers` object, at the top or under `req`. */
const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'x-api-key', 'cookie']);
export const CENSORED = '[redacted]';

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A copy of `headers` with its credentials censored, or the same object when it has none. */
function censorHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key in headers) {
    if (SECRET_HEADERS.has(key.toLowerCase())) (copy ??= { ...headers })[key] = CENSORED;
  }
  return copy ?? headers;
}

/** A copy of a nested object with its secret keys censored, or the same object when it has none. */
function censorNested(key: string, value: Record<string, unknown>): Record<string, unknown> {
  if (key === 'headers') return censorHeaders(value);
  let copy: Record<string, unknown> | undefined;
  for (const inner in value) {
    if (SECRET_KEYS.has(inner)) (copy ??= { ...value })[inner] = CENSORED;
    else if (key === 'req' && inner === 'headers' && isRecord(value[inner])) {
      const headers = censorHeaders(value[inner]);
      if (headers !== value[inner]) (copy ??= { ...value })[inner] = headers;
    }
  }
  return copy ?? value;
}

function withProperties(error: Error, censored: Record<string, unknown>): Error {
  const clone = Object.create(Object.getPrototypeOf(error) as object) as Error;
  const descriptors = Object.getOwnPropertyDescriptors(error);
  for (const key of Reflect.ownKeys(descriptors)) {
    const descriptor = descriptors[key as keyof typeof descriptors]!;
    // From Node 22 (V8 12) `stack` is an own accessor that reads a slot only the original error has; on a clone it
    // returns undefined. The value it reads now is what the clone keeps.
    if (descriptor.get !== undefined) {
      descriptors[key as keyof typeof descriptors] = { value: (error as unknown as Record<PropertyKey, unknown>)[key], writable: true, enumerable: descriptor.enumerable ?? false, configurable: true };
    }
  }
  Object.defineProperties(clone, descriptors);
  return Object.assign(clone, censored);
}

/**
 * Censors credentials in a log object without touching the caller's object.
 * Runs on every log line, so the common case (nothing to censor) only reads
 * keys and allocates nothing; pino's path redaction cloned every logged
 * object instead, a large share of all the gateway's allocation per request.
 */
export function censorSecrets(object: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key in object) {
    const value = object[key];
    if (SECRET_KEYS.has(key)) (copy ??= { ...object })[key] = CENSORED;
    else if (isRecord(value)) {
      const censored = censorNested(key, value);
      if (censored === value) continue;
      // An error stays an error (same prototype, message and stack), so pino's serializer renders it as one.
      (copy ??= { ...object })[key] = value instanceof Error ? withProperties(value, censored) : censored;
    }
  }
  return copy ?? object;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    formatters: { log: censorSecrets },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
}

/** Log lines gathered before stdout is written (bytes), and how long a line may wait for more (ms). */
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 200;

/**
 * The process's logger: to `destination`, or to stdout in batches. One write
 * per line handed every request's access-log line to a libuv thread (a
 * wake-up and a context switch each); gathered, one write carries many lines
 * under load, and a quiet gateway's lines leave within LOG_FLUSH_MS.
 * Pino writes what is buffered on exit; `kill -9` loses at most the last
 * LOG_FLUSH_MS of log lines (never a usage record: those are committed
 * before the reply).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(loggerOptions(level), destination ?? pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }));
}
