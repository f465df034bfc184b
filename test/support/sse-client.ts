// A data-plane client for fault tests: one call, plain or streamed, with the
// parsed SSE events and the moment the first byte arrived.

export interface SseEvent {
  event: string;
  data: any;
}

export interface CallResult {
  status: number;
  requestId: string | null;
  /** Parsed JSON body (plain calls and errors). */
  body: any;
  /** Parsed SSE events (streamed calls). */
  events: SseEvent[];
  ms: number;
}

export interface StartedCall {
  /** Resolves once response headers and the first body bytes have arrived. */
  firstByte: Promise<void>;
  done: Promise<CallResult>;
}

export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trim());
    }
    const raw = data.join('\n');
    let parsed: unknown = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // `[DONE]`
    }
    events.push({ event, data: parsed });
  }
  return events;
}

/** A response as the client reads it: the SSE events of a stream, or else the JSON body (the text itself when it is not JSON). */
export function parseAnswer(headers: Headers, text: string): { body: any; events: SseEvent[] } {
  if ((headers.get('content-type') ?? '').startsWith('text/event-stream')) return { body: null, events: parseSse(text) };
  try {
    return { body: JSON.parse(text), events: [] };
  } catch {
    return { body: text, events: [] };
  }
}

/** POSTs a messages-form body with the key; streams are read to the end. */
export function startCall(base: string, key: string, body: Record<string, unknown>, path = '/v1/messages', signal?: AbortSignal): StartedCall {
  let markFirst = (): void => undefined;
  let failFirst = (_error: unknown): void => undefined;
  const firstByte = new Promise<void>((resolve, reject) => {
    markFirst = resolve;
    failFirst = reject;
  });
  firstByte.catch(() => undefined);
  const started = Date.now();
  const done = (async (): Promise<CallResult> => {
    try {
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
      const decoder = new TextDecoder();
      let text = '';
      const reader = response.body!.getReader();
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) break;
        markFirst();
        text += decoder.decode(value, { stream: true });
      }
      markFirst();
      text += decoder.decode();
      return {
        status: response.status,
        requestId: response.headers.get('request-id'),
        ...parseAnswer(response.headers, text),
        ms: Date.now() - started,
      };
    } catch (error) {
      failFirst(error);
      throw error;
    }
  })();
  return { firstByte, done };
}

export const messagesBody = (model: string, stream: boolean, text = 'Tell me about drains.'): Record<string, unknown> => ({
  model,
  max_tokens: 512,
  stream,
  messages: [{ role: 'user', content: text }],
});
