// Tells "PostgreSQL cannot be reached right now" apart from "this statement is
// wrong": the first is a 503 the caller may retry (docs/architecture.md §8: a call whose
// usage cannot be committed is not answered), the second a bug (500).

/** Socket errors of a lost or unreachable server. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of an unavailable server: class 08 (connection exception) but
 * 08P01 (protocol violation: a malformed statement, e.g. a NUL in a text
 * parameter, is our bug), 57P01–57P03 (shutdown, crash, cannot connect
 * now), 53300 (too many connections) and 57014 (statement timeout).
 */
const UNAVAILABLE_STATES = /^(08(?!P01)...|57P0[1-3]|53300|57014)$/;

/** What node-postgres (and the ORM on top of it) say when the connection is gone or never came. */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'the database system is shutting down',
  'the database system is starting up',
];

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; name?: unknown; originalError?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || UNAVAILABLE_STATES.test(e.code))) return true;
  if (e.name === 'ConnectionException') return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.some((m) => (e.message as string).includes(m))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  // Wrapped by the ORM (`cause`) or by GraphQL (`originalError`).
  return isDatabaseUnavailable(e.cause, depth + 1) || isDatabaseUnavailable(e.originalError, depth + 1);
}
