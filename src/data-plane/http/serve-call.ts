import { validateHeaderValue } from 'node:http';
import { AppError, appError, toAppError } from '../../errors';
import { headerToken } from '../../http/header-token';
import type { ResponseUsage } from '../../metering/tiers';
import { UpstreamError } from '../../providers/provider';
import type { CanonicalEvent } from '../../core/canonical';
import { ResponseCollector } from '../collect-response';
import { routeHeader, type Call } from '../call';
import { errorBody, type ErrorForm } from './error-envelopes';
import type { CallReply } from './operation';

/** Per-form streaming encoder. */
export interface StreamWriter {
  start(usage: ResponseUsage): string;
  event(e: CanonicalEvent): string;
  finish(stop: Extract<CanonicalEvent, { type: 'message_stop' }>, usage: ResponseUsage): string;
  error(error: AppError): string;
}

/** One protocol form's encoders. */
export interface FormCodec {
  errorForm: ErrorForm;
  plain(call: Call, answer: ResponseCollector, usage: ResponseUsage): unknown;
  stream(call: Call): StreamWriter;
  /**
   * Resolves when what encoding the final answer started writing (a stored
   * response) is committed; the reply's last bytes wait for it, so the
   * caller's next call finds it on any instance.
   */
  settled?(): Promise<unknown>;
}

/**
 * Names the caller's fields a translation to another protocol left out, so
 * nothing is dropped silently: `a, b, c`, each name a headerToken (a name
 * from the caller's JSON may hold any character).
 */
export const DROPPED_HEADER = 'x-gateway-dropped';

/** Says the gateway lowered max_tokens to what the account's remaining credit covers (docs/architecture.md §9): `<requested> -> <sent>`. */
export const LOWERED_HEADER = 'x-gateway-max-tokens-lowered';

/**
 * The headers of an answered call beyond its content type. Every value is
 * checked as Node will check it on write, so writing them cannot fail once
 * the record is committed.
 */
function callHeaders(call: Call): Record<string, string> {
  const headers: Record<string, string> = { 'x-route': routeHeader(call.route) };
  if (call.dropped.length > 0) headers[DROPPED_HEADER] = call.dropped.map(headerToken).join(', ');
  const lowered = call.reservation?.lowered;
  if (lowered) headers[LOWERED_HEADER] = `${lowered.from} -> ${lowered.to}`;
  // A key with a rate limit sees its budgets on every answer, as OpenAI's clients do (docs/architecture.md §18).
  if (call.rate) Object.assign(headers, call.rate.headers());
  for (const [name, value] of Object.entries(headers)) validateHeaderValue(name, value);
  return headers;
}

/** The 500 of a call whose reply could not be built: metered as failed, never left hanging. */
const replyFailed = (cause: unknown): AppError => appError('replyFailed', { cause });

export interface ServeOptions {
  /**
   * How long a stream may wait for a client that stopped reading (its socket
   * buffers full) before the gateway hangs up on it: the call is then cut
   * like a client abort (upstream cancelled, what was produced metered).
   */
  stallMs: number;
}

function write(reply: CallReply, chunk: string, stallMs: number): Promise<void> {
  if (chunk === '' || reply.raw.destroyed) return Promise.resolve();
  if (reply.raw.write(chunk)) return Promise.resolve();
  // Backpressure: a slow client slows the upstream read instead of growing memory.
  return new Promise((resolve) => {
    const stalled = setTimeout(() => reply.raw.destroy(), stallMs);
    const done = () => {
      clearTimeout(stalled);
      reply.raw.off('drain', done);
      reply.raw.off('close', done);
      resolve();
    };
    reply.raw.once('drain', done);
    reply.raw.once('close', done);
  });
}

/** The gateway's own reason for aborting a call (e.g. shutting down), as opposed to the client leaving. */
export function gatewayCut(call: Call): AppError | undefined {
  const reason: unknown = call.signal.aborted ? call.signal.reason : undefined;
  return reason instanceof AppError ? reason : undefined;
}

async function servePlain(call: Call, codec: FormCodec, reply: CallReply): Promise<void> {
  const collector = new ResponseCollector();
  try {
    await call.forEach((e) => collector.push(e));
  } catch (error) {
    const cut = gatewayCut(call);
    if (error instanceof UpstreamError && error.failure === 'aborted' && !cut) {
      await call.finish('client_aborted', 'client_aborted');
      return;
    }
    await call.finish('upstream_error', cut?.code ?? (error instanceof UpstreamError ? error.failure : 'internal'));
    throw cut ?? appError('upstreamFailedAnswering', (error as Error).message);
  }
  // The whole reply, headers and body, is built before the record says it
  // was answered: one that cannot be built is metered as failed and answered
  // with a 500 in the caller's form.
  const usage = await call.finalUsage();
  let headers: Record<string, string>;
  let body: string;
  try {
    headers = { 'content-type': 'application/json', ...callHeaders(call) };
    body = JSON.stringify(codec.plain(call, collector, usage));
  } catch (error) {
    await call.finish('upstream_error', 'reply_failed');
    throw replyFailed(error);
  }
  // The usage record (and a stored response) is committed before the reply is sent (docs/architecture.md §8).
  await Promise.all([call.finish(call.stopReason === 'refusal' ? 'blocked' : 'ok'), codec.settled?.()]);
  await reply.code(200).headers(headers).send(body);
}

async function serveStream(call: Call, codec: FormCodec, reply: CallReply, requestId: string, { stallMs }: ServeOptions): Promise<void> {
  reply.hijack();
  call.followKey();
  const res = reply.raw;
  const writer = codec.stream(call);
  let started = false;
  try {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'request-id': requestId,
      'x-request-id': requestId,
      ...callHeaders(call),
    });
    for await (const e of call.events()) {
      if (!started && e.type !== 'message_start' && e.type !== 'usage') {
        // message_start waits for the upstream's opening usage, so it can carry it.
        started = true;
        await write(reply, writer.start(call.usageSoFar()), stallMs);
      }
      if (e.type === 'message_stop') {
        if (!started) await write(reply, writer.start(call.usageSoFar()), stallMs);
        started = true;
        // The closing events are encoded before the record says the call was answered.
        const closing = writer.finish(e, await call.finalUsage());
        await Promise.all([call.finish(e.stopReason === 'refusal' ? 'blocked' : 'ok'), codec.settled?.()]);
        await write(reply, closing, stallMs);
        break;
      }
      await write(reply, writer.event(e), stallMs);
    }
  } catch (error) {
    if (!res.headersSent) {
      // The reply could not even begin: the upstream is let go, the call metered as failed, and the client gets a 500.
      await call.discard();
      await call.finish('upstream_error', 'reply_failed').catch(() => undefined);
      const failed = replyFailed(error);
      res.writeHead(failed.status, { 'content-type': 'application/json', 'request-id': requestId, 'x-request-id': requestId });
      res.end(JSON.stringify(errorBody(codec.errorForm, failed, requestId)));
      // Thrown on for the transport's error log; the reply is already sent.
      throw failed;
    }
    // Cut by the gateway (grace period over): the client is still listening, so it is told why.
    const cut = gatewayCut(call);
    if (error instanceof UpstreamError && error.failure === 'aborted' && !cut) {
      await call.finish('client_aborted', 'client_aborted').catch(() => undefined);
      return;
    }
    const failure = cut ?? (error instanceof UpstreamError ? appError('upstreamFailedMidStream', error.message) : toAppError(error));
    await call.finish('upstream_error', cut?.code ?? (error instanceof UpstreamError ? error.failure : failure.code)).catch(() => undefined);
    if (!started) await write(reply, writer.start(call.usageSoFar()), stallMs);
    await write(reply, writer.error(failure), stallMs);
  } finally {
    res.end();
  }
}

/** Answers an accepted call in the caller's form, plain or streamed. */
export async function serveCall(call: Call, codec: FormCodec, reply: CallReply, requestId: string, options: ServeOptions): Promise<void> {
  if (call.request.stream) await serveStream(call, codec, reply, requestId, options);
  else await servePlain(call, codec, reply);
}
