// How large a request's body may be, decided from its credential before a
// byte of the body is read (issue 28). A caller nobody knows yet (a login, an
// anonymous GraphQL query, a bad session token, any unknown route) may send a
// few KB; a console session enough for the console's largest operation; an
// API key the data plane's 20 MB. Each route's onRequest hook looks the
// credential up from the headers and sets `request.bodyAllowance`; the
// server's preParsing hook answers 413 from Content-Length before reading and
// stops a chunked body the moment it passes the limit.
import { type AppError, appError } from '../errors';
import { formatBytes } from './body-budget';

export interface BodyAllowance {
  limitBytes: number;
  /** Whether a valid API key or console session was shown (see body-budget.ts: anonymous bodies share a smaller part). */
  credentialed: boolean;
  /** Who may send this much, for the 413's message. */
  who: string;
}

/** Largest data-plane body of a caller with a valid key (bytes). */
export const BODY_LIMIT = 20 * 1024 * 1024;
/** A login is two short strings; the console's sign-in mutation is about 200 bytes. */
export const PRE_AUTH_BODY_LIMIT = 8 * 1024;
/** The console's largest operation (the keys page with its fragment and variables) is under 2 KB. */
export const SESSION_BODY_LIMIT = 64 * 1024;

export const PRE_AUTH_BODY: BodyAllowance = { limitBytes: PRE_AUTH_BODY_LIMIT, credentialed: false, who: 'a request without a valid API key or console session' };
export const SESSION_BODY: BodyAllowance = { limitBytes: SESSION_BODY_LIMIT, credentialed: true, who: 'a console request' };
export const KEYED_BODY: BodyAllowance = { limitBytes: BODY_LIMIT, credentialed: true, who: 'an API call' };

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the route's onRequest hook once the credential is known; null: PRE_AUTH_BODY. */
    bodyAllowance: BodyAllowance | null;
  }
}

/** The 413 for a body past its allowance; the rest of it is not read, so the connection closes. */
export function bodyTooLarge(allowance: BodyAllowance): AppError {
  return appError('bodyPastAllowance', { limit: formatBytes(allowance.limitBytes), who: allowance.who });
}
