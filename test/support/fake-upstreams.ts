// Fake upstream servers on 127.0.0.1 that speak the real wire protocols over
// real HTTP: Anthropic Messages (`POST /v1/messages`), OpenAI Chat
// Completions (`POST /v1/chat/completions`) and, on the Responses fake, the
// OpenAI Responses API (`POST /v1/responses`) beside Chat Completions.
// Streams are byte-exact SSE in each protocol's format. Tests script the next replies, then read what the
// gateway sent in `requests`.
//
//   const upstream = await startFakeAnthropic();
//   upstream.script({ text: 'Hi!', usage: { input: 20, output: 3 } }, { status: 529 });
//   ... point a deployment at upstream.baseUrl, call ...
//   expect(upstream.requests[0]?.headers['x-api-key']).to.equal('sk-upstream');
//   await upstream.close();
//
// With nothing scripted a call gets the default reply: "Hello there!",
// usage 11 in / 6 out, streamed when the request asked for a stream.
import http, { type IncomingHttpHeaders } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { CanonicalRequest } from '../../src/core/canonical';
import type { Decimal, Deployment, MockBehaviour, ProviderType } from '../../src/core/catalog.types';
import { listenLocal } from './local-server';

export interface FakeUsage {
  /** Anthropic `input_tokens` (uncached part); OpenAI `prompt_tokens` (cached part included). */
  input?: number;
  output?: number;
  /** Anthropic `cache_read_input_tokens`; OpenAI `prompt_tokens_details.cached_tokens`. */
  cacheRead?: number;
  /** Anthropic `cache_creation_input_tokens` (unused by OpenAI). */
  cacheCreation?: number;
  /** Anthropic `cache_creation: {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`: the writes by TTL, as newer API versions report them. */
  cacheCreationSplit?: { ephemeral5m: number; ephemeral1h: number };
}

export interface FakeReply {
  /** Reply text; default "Hello there!". */
  text?: string;
  /** How the text is streamed; default: split before each space. */
  chunks?: string[];
  /** Anthropic thinking block / OpenAI `reasoning_content`, sent before the text. */
  thinking?: string;
  toolUse?: { id?: string; name: string; input: unknown; argumentChunks?: string[] };
  usage?: FakeUsage;
  /** Protocol-native stop/finish reason; default end_turn/stop (tool_use/tool_calls with a tool); Responses: `max_output_tokens` or `content_filter` make it incomplete. */
  stopReason?: string;
  /** Reply model; default: the model the request named. */
  model?: string;
  id?: string;
  /** Anthropic: repeat input and cache usage in message_delta, as newer API versions do. */
  cumulativeDeltaUsage?: boolean;
  /** Answer with this status (other than 200) and an error body in the protocol's form. */
  status?: number;
  error?: { type?: string; message?: string };
  /** Raw error body instead of the protocol's form. */
  errorBody?: string;
  headers?: Record<string, string>;
  /** Wait before sending the response headers. */
  delayMs?: number;
  /** Wait between stream events. */
  chunkDelayMs?: number;
  /** Destroy the socket after this many stream events. */
  resetAfterEvents?: number;
  /** Send this many stream events, then go silent with the connection open. */
  hangAfterEvents?: number;
  /** Never send response headers. */
  hang?: boolean;
  /** Answer with a plain JSON body even when the request asked for a stream (as some servers do). */
  ignoreStream?: boolean;
  /** Send an in-stream error after this many events (Anthropic `event: error`; OpenAI `{error}` chunk). */
  streamError?: { afterEvents: number; type: string; message: string };
  /**
   * Verbatim stream events instead of generated ones: Anthropic `[event, data]`
   * pairs, OpenAI chunk objects (`[DONE]` is added), or Responses event
   * objects (`sequence_number` is added). For relay tests.
   */
  rawEvents?: Array<[string, unknown]> | unknown[];
  /** A verbatim plain JSON reply instead of the generated one. */
  rawBody?: unknown;
  /** Anthropic `POST /v1/messages/count_tokens`: the `input_tokens` to answer (default 4242). */
  countTokens?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  rawBody: string;
  /** Which TCP connection carried the request (1, 2, …): equal ids mean keep-alive reuse. */
  connection: number;
  /** When the whole request had arrived (Date.now()). */
  receivedAt: number;
  /** The client closed the connection before the reply was complete. */
  closedEarly: boolean;
  /** Resolves when the exchange is over, either way. */
  ended: Promise<void>;
}

export interface FakeUpstream {
  /** What a deployment's base_url would be: without /v1 for Anthropic, with /v1 for OpenAI. */
  baseUrl: string;
  /** http://127.0.0.1:port */
  origin: string;
  requests: RecordedRequest[];
  /** Queues replies for the next calls, in order. */
  script(...replies: FakeReply[]): void;
  /** Drops the replies no call has taken yet. */
  unscript(): void;
  close(): Promise<void>;
}

type Protocol = 'anthropic' | 'openai' | 'responses';

const DEFAULT_TEXT = 'Hello there!';
const DEFAULT_USAGE = { input: 11, output: 6, cacheRead: 0, cacheCreation: 0 };

export function startFakeAnthropic(): Promise<FakeUpstream> {
  return startFake('anthropic');
}

export function startFakeOpenAI(): Promise<FakeUpstream> {
  return startFake('openai');
}

/** An OpenAI server that speaks the Responses API (`/v1/responses`) as well as Chat Completions. */
export function startFakeOpenAIResponses(): Promise<FakeUpstream> {
  return startFake('responses');
}

async function startFake(protocol: Protocol): Promise<FakeUpstream> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  let counter = 0;
  let sockets = 0;
  const connections = new WeakMap<object, number>();
  const server = http.createServer((req, res) => {
    if (!connections.has(req.socket)) connections.set(req.socket, ++sockets);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      let markEnded = (): void => undefined;
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        rawBody,
        connection: connections.get(req.socket) ?? 0,
        receivedAt: Date.now(),
        closedEarly: false,
        ended: new Promise<void>((resolve) => {
          markEnded = resolve;
        }),
      };
      requests.push(recorded);
      res.on('close', () => {
        if (!res.writableFinished) recorded.closedEarly = true;
        markEnded();
      });
      const path = (req.url ?? '').split('?')[0];
      // The Responses fake answers Chat Completions too, as OpenAI does.
      const spoken: Protocol = protocol === 'responses' && path === '/v1/chat/completions' ? 'openai' : protocol;
      const expected = { anthropic: '/v1/messages', openai: '/v1/chat/completions', responses: '/v1/responses' }[protocol];
      if (req.method === 'POST' && protocol === 'anthropic' && path === '/v1/messages/count_tokens') {
        const reply = queue.shift() ?? {};
        if (reply.status !== undefined && reply.status !== 200) {
          sendJson(res, reply.status, errorBody(protocol, reply.status, reply.error ?? {}), {});
          return;
        }
        sendJson(res, 200, { input_tokens: reply.countTokens ?? 4242 }, {});
        return;
      }
      if (req.method !== 'POST' || (path !== expected && spoken === protocol)) {
        sendJson(res, 404, errorBody(protocol, 404, { type: 'not_found_error', message: `no route ${req.url}` }), {});
        return;
      }
      counter++;
      const reply = queue.shift() ?? {};
      void answer(spoken, reply, recorded, res, `${counter}`).catch(() => res.destroy());
    });
  });
  const { origin, close } = await listenLocal(server);
  return {
    origin,
    baseUrl: protocol === 'anthropic' ? origin : `${origin}/v1`,
    requests,
    script: (...replies) => {
      queue.push(...replies);
    },
    unscript: () => {
      queue.length = 0;
    },
    close,
  };
}

async function answer(
  protocol: Protocol,
  reply: FakeReply,
  recorded: RecordedRequest,
  res: http.ServerResponse,
  serial: string,
): Promise<void> {
  if (reply.hang) return;
  if (reply.delayMs) await delay(reply.delayMs);
  const requestId = `req_fake_${serial}`;
  const idHeader = protocol === 'anthropic' ? 'request-id' : 'x-request-id';
  const headers = { [idHeader]: requestId, ...reply.headers };
  if (reply.status !== undefined && reply.status !== 200) {
    const text = reply.errorBody ?? JSON.stringify(errorBody(protocol, reply.status, reply.error ?? {}, requestId));
    res.writeHead(reply.status, { 'content-type': reply.errorBody ? 'text/plain' : 'application/json', ...headers });
    res.end(text);
    return;
  }
  const requestBody = (recorded.body ?? {}) as Record<string, any>;
  const model = reply.model ?? (typeof requestBody.model === 'string' ? requestBody.model : 'fake-model');
  if (requestBody.stream !== true || reply.ignoreStream) {
    const body =
      reply.rawBody ??
      (protocol === 'anthropic'
        ? anthropicMessage(reply, model, serial)
        : protocol === 'responses'
          ? responsesObject(reply, model, serial, requestBody, 'completed')
          : openAiCompletion(reply, model, serial));
    sendJson(res, 200, body, headers);
    return;
  }
  const events = reply.rawEvents
    ? protocol === 'anthropic'
      ? (reply.rawEvents as Array<[string, unknown]>).map(([name, data]) => anthropicSse(name, data))
      : protocol === 'responses'
        ? (reply.rawEvents as Array<Record<string, unknown>>).map((data, i) => responsesSse({ ...data, sequence_number: i }))
        : [...reply.rawEvents.map((chunk) => openAiSse(chunk)), 'data: [DONE]\n\n']
    : protocol === 'anthropic'
      ? anthropicEvents(reply, model, serial)
      : protocol === 'responses'
        ? responsesEvents(reply, model, serial, requestBody)
        : openAiEvents(reply, model, serial, requestBody.stream_options?.include_usage === true);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  res.flushHeaders();
  for (const [sent, event] of events.entries()) {
    if (reply.streamError && sent === reply.streamError.afterEvents) {
      const { type, message } = reply.streamError;
      res.end(
        protocol === 'anthropic'
          ? anthropicSse('error', { type: 'error', error: { type, message } })
          : protocol === 'responses'
            ? responsesSse({ type: 'error', code: type, message, param: null, sequence_number: sent })
            : openAiSse({ error: { message, type, param: null, code: null } }),
      );
      return;
    }
    if (reply.resetAfterEvents !== undefined && sent === reply.resetAfterEvents) {
      res.socket?.destroy();
      return;
    }
    if (reply.hangAfterEvents !== undefined && sent === reply.hangAfterEvents) return;
    if (sent > 0 && reply.chunkDelayMs) await delay(reply.chunkDelayMs);
    if (res.destroyed) return;
    res.write(event);
  }
  res.end();
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function errorBody(
  protocol: Protocol,
  status: number,
  error: { type?: string; message?: string },
  requestId?: string,
): unknown {
  const type = error.type ?? defaultErrorType(status);
  const message = error.message ?? `fake upstream error ${status}`;
  if (protocol === 'anthropic') {
    return { type: 'error', error: { type, message }, ...(requestId ? { request_id: requestId } : {}) };
  }
  return { error: { message, type, param: null, code: null } };
}

function defaultErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

function textOf(reply: FakeReply): string {
  return reply.text ?? (reply.toolUse && reply.chunks === undefined ? '' : DEFAULT_TEXT);
}

function textChunks(reply: FakeReply): string[] {
  if (reply.chunks) return reply.chunks;
  const text = textOf(reply);
  return text === '' ? [] : (text.match(/\s*\S+\s*$|\s*\S+/g) ?? [text]);
}

function usageOf(reply: FakeReply): typeof DEFAULT_USAGE & FakeUsage {
  return { ...DEFAULT_USAGE, ...reply.usage };
}

/** An Anthropic `usage` object: input, cache fields (the TTL split when scripted) and output. */
function anthropicUsage(usage: ReturnType<typeof usageOf>, output: number): Record<string, unknown> {
  const split = usage.cacheCreationSplit;
  return {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheCreation,
    cache_read_input_tokens: usage.cacheRead,
    ...(split ? { cache_creation: { ephemeral_5m_input_tokens: split.ephemeral5m, ephemeral_1h_input_tokens: split.ephemeral1h } } : {}),
    output_tokens: output,
  };
}

function argumentChunks(toolUse: NonNullable<FakeReply['toolUse']>): string[] {
  if (toolUse.argumentChunks) return toolUse.argumentChunks;
  const json = JSON.stringify(toolUse.input);
  const pieces: string[] = [];
  for (let i = 0; i < json.length; i += 7) pieces.push(json.slice(i, i + 7));
  return pieces;
}

// ---- Anthropic Messages ----------------------------------------------------

function anthropicSse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function anthropicStop(reply: FakeReply): string {
  return reply.stopReason ?? (reply.toolUse ? 'tool_use' : 'end_turn');
}

function anthropicMessage(reply: FakeReply, model: string, serial: string): unknown {
  const usage = usageOf(reply);
  const content: unknown[] = [];
  if (reply.thinking !== undefined) {
    content.push({ type: 'thinking', thinking: reply.thinking, signature: `sig_fake_${serial}` });
  }
  const text = textOf(reply);
  if (text !== '') content.push({ type: 'text', text });
  if (reply.toolUse) {
    const { id, name, input } = reply.toolUse;
    content.push({ type: 'tool_use', id: id ?? `toolu_fake_${serial}`, name, input });
  }
  return {
    id: reply.id ?? `msg_fake_${serial}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: anthropicStop(reply),
    stop_sequence: null,
    usage: anthropicUsage(usage, usage.output),
  };
}

function anthropicEvents(reply: FakeReply, model: string, serial: string): string[] {
  const usage = usageOf(reply);
  const events = [
    anthropicSse('message_start', {
      type: 'message_start',
      message: {
        id: reply.id ?? `msg_fake_${serial}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: anthropicUsage(usage, 1),
      },
    }),
  ];
  let index = 0;
  const delta = (payload: unknown): string =>
    anthropicSse('content_block_delta', { type: 'content_block_delta', index, delta: payload });
  const stop = (): string => anthropicSse('content_block_stop', { type: 'content_block_stop', index });
  if (reply.thinking !== undefined) {
    events.push(
      anthropicSse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
      delta({ type: 'thinking_delta', thinking: reply.thinking }),
      delta({ type: 'signature_delta', signature: `sig_fake_${serial}` }),
      stop(),
    );
    index++;
  }
  const chunks = textChunks(reply);
  if (chunks.length > 0) {
    events.push(
      anthropicSse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      }),
      anthropicSse('ping', { type: 'ping' }),
      ...chunks.map((text) => delta({ type: 'text_delta', text })),
      stop(),
    );
    index++;
  }
  if (reply.toolUse) {
    events.push(
      anthropicSse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: reply.toolUse.id ?? `toolu_fake_${serial}`, name: reply.toolUse.name, input: {} },
      }),
      delta({ type: 'input_json_delta', partial_json: '' }),
      ...argumentChunks(reply.toolUse).map((partial) => delta({ type: 'input_json_delta', partial_json: partial })),
      stop(),
    );
  }
  events.push(
    anthropicSse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: anthropicStop(reply), stop_sequence: null },
      usage: reply.cumulativeDeltaUsage ? anthropicUsage(usage, usage.output) : { output_tokens: usage.output },
    }),
    anthropicSse('message_stop', { type: 'message_stop' }),
  );
  return events;
}

// ---- OpenAI Chat Completions -----------------------------------------------

function openAiSse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function openAiFinish(reply: FakeReply): string {
  return reply.stopReason ?? (reply.toolUse ? 'tool_calls' : 'stop');
}

function openAiUsage(reply: FakeReply): unknown {
  const usage = usageOf(reply);
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

function openAiCompletion(reply: FakeReply, model: string, serial: string): unknown {
  const text = textOf(reply);
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' ? null : text, refusal: null };
  if (reply.thinking !== undefined) message.reasoning_content = reply.thinking;
  if (reply.toolUse) {
    const { id, name, input } = reply.toolUse;
    message.tool_calls = [
      { id: id ?? `call_fake_${serial}`, type: 'function', function: { name, arguments: JSON.stringify(input) } },
    ];
  }
  return {
    id: reply.id ?? `chatcmpl-fake${serial}`,
    object: 'chat.completion',
    created: 1_727_346_173,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: openAiFinish(reply) }],
    usage: openAiUsage(reply),
  };
}

function openAiEvents(reply: FakeReply, model: string, serial: string, includeUsage: boolean): string[] {
  const id = reply.id ?? `chatcmpl-fake${serial}`;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    openAiSse({ id, object: 'chat.completion.chunk', created: 1_727_346_173, model, system_fingerprint: 'fp_fake', choices, ...extra });
  const choice = (delta: Record<string, unknown>, finish: string | null = null): unknown => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  const events = [chunk([choice({ role: 'assistant', content: '', refusal: null })])];
  if (reply.thinking !== undefined) events.push(chunk([choice({ reasoning_content: reply.thinking })]));
  for (const text of textChunks(reply)) events.push(chunk([choice({ content: text })]));
  if (reply.toolUse) {
    events.push(
      chunk([
        choice({
          tool_calls: [
            {
              index: 0,
              id: reply.toolUse.id ?? `call_fake_${serial}`,
              type: 'function',
              function: { name: reply.toolUse.name, arguments: '' },
            },
          ],
        }),
      ]),
      ...argumentChunks(reply.toolUse).map((fragment) =>
        chunk([choice({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })]),
      ),
    );
  }
  events.push(chunk([choice({}, openAiFinish(reply))]));
  if (includeUsage) events.push(chunk([], { usage: openAiUsage(reply) }));
  events.push('data: [DONE]\n\n');
  return events;
}

// ---- OpenAI Responses ------------------------------------------------------

function responsesSse(data: Record<string, unknown>): string {
  return `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
}

function responsesUsage(reply: FakeReply): unknown {
  const usage = usageOf(reply);
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cacheRead },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: reply.thinking === undefined ? 0 : 3 },
    total_tokens: usage.input + usage.output,
  };
}

/** The output items of a reply, done: reasoning, then the message, then the function call. */
function responsesOutput(reply: FakeReply, serial: string, request: Record<string, any>): Array<Record<string, unknown>> {
  const output: Array<Record<string, unknown>> = [];
  if (reply.thinking !== undefined) {
    const encrypted = Array.isArray(request.include) && request.include.includes('reasoning.encrypted_content');
    output.push({
      id: `rs_fake_${serial}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: reply.thinking }],
      ...(encrypted ? { encrypted_content: `enc_fake_${serial}` } : {}),
    });
  }
  const text = textOf(reply);
  if (text !== '') {
    output.push({
      id: `msg_fake_${serial}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    });
  }
  if (reply.toolUse) {
    const { id, name, input } = reply.toolUse;
    output.push({
      id: `fc_fake_${serial}`,
      type: 'function_call',
      status: 'completed',
      call_id: id ?? `call_fake_${serial}`,
      name,
      arguments: JSON.stringify(input),
    });
  }
  return output;
}

function responsesObject(reply: FakeReply, model: string, serial: string, request: Record<string, any>, status: string): Record<string, unknown> {
  const incomplete = reply.stopReason === 'max_output_tokens' || reply.stopReason === 'content_filter';
  const done = status === 'completed';
  return {
    id: reply.id ?? `resp_fake_${serial}`,
    object: 'response',
    created_at: 1_727_346_173,
    status: done && incomplete ? 'incomplete' : status,
    error: null,
    incomplete_details: done && incomplete ? { reason: reply.stopReason } : null,
    instructions: request.instructions ?? null,
    model,
    output: done ? responsesOutput(reply, serial, request) : [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    service_tier: 'default',
    store: request.store ?? true,
    tools: request.tools ?? [],
    usage: done ? responsesUsage(reply) : null,
  };
}

function responsesEvents(reply: FakeReply, model: string, serial: string, request: Record<string, any>): string[] {
  let sequence = 0;
  const events: string[] = [];
  const emit = (type: string, data: Record<string, unknown>): void => {
    events.push(responsesSse({ type, sequence_number: sequence++, ...data }));
  };
  const inProgress = responsesObject(reply, model, serial, request, 'in_progress');
  emit('response.created', { response: inProgress });
  emit('response.in_progress', { response: inProgress });
  responsesOutput(reply, serial, request).forEach((done, outputIndex) => {
    const at = { item_id: done.id, output_index: outputIndex };
    switch (done.type) {
      case 'reasoning': {
        const { encrypted_content: _encrypted, ...rest } = done;
        emit('response.output_item.added', { output_index: outputIndex, item: { ...rest, summary: [] } });
        emit('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } });
        emit('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: reply.thinking });
        emit('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: reply.thinking });
        emit('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: reply.thinking } });
        break;
      }
      case 'message': {
        emit('response.output_item.added', { output_index: outputIndex, item: { ...done, status: 'in_progress', content: [] } });
        emit('response.content_part.added', { ...at, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
        for (const delta of textChunks(reply)) emit('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] });
        emit('response.output_text.done', { ...at, content_index: 0, text: textOf(reply), logprobs: [] });
        emit('response.content_part.done', { ...at, content_index: 0, part: (done.content as unknown[])[0] });
        break;
      }
      case 'function_call': {
        emit('response.output_item.added', { output_index: outputIndex, item: { ...done, status: 'in_progress', arguments: '' } });
        for (const delta of argumentChunks(reply.toolUse!)) emit('response.function_call_arguments.delta', { ...at, delta });
        emit('response.function_call_arguments.done', { ...at, name: done.name, arguments: done.arguments });
        break;
      }
    }
    emit('response.output_item.done', { output_index: outputIndex, item: done });
  });
  const final = responsesObject(reply, model, serial, request, 'completed');
  emit(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
  return events;
}

// ---- Factories for adapter tests -------------------------------------------

const ONE: Decimal = { units: 1n, scale: 0, text: '1' };

export const QUIET_MOCK: MockBehaviour = {
  latencyMs: 0,
  chunkDelayMs: 0,
  chunkChars: 16,
  failRate: 0,
  failStatus: 503,
  resetAfterChunks: null,
};

export interface FakeDeploymentOptions {
  baseUrl?: string;
  model?: string;
  thinking?: boolean;
  apiKey?: string;
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  mock?: Partial<MockBehaviour>;
  name?: string;
  /** An `openai` provider that speaks the Responses API too. */
  responses?: boolean;
}

/** A deployment of the given provider type, e.g. pointed at a fake upstream's baseUrl. */
export function fakeDeployment(type: ProviderType, options: FakeDeploymentOptions = {}): Deployment {
  return {
    provider: {
      name: options.name ?? `fake-${type}`,
      type,
      baseUrl: options.baseUrl,
      apiKeyEnv: type === 'mock' ? undefined : 'FAKE_UPSTREAM_KEY',
      apiKey: type === 'mock' ? undefined : (options.apiKey ?? 'sk-upstream-test'),
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 5_000,
      mock: { ...QUIET_MOCK, ...options.mock },
      ...(options.responses ? { responses: true } : {}),
    },
    model: options.model ?? `${type}-model`,
    thinking: options.thinking ?? false,
    unify: { input: ONE, cachedInput: ONE, output: ONE },
  };
}

/** A small canonical request; override any field. */
export function canonicalRequest(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: 'tsxt-general',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }],
    maxTokens: 256,
    stream: false,
    ...overrides,
  };
}
