// A lean Anthropic Messages upstream for load tests: no scripting, no
// request log (test/support/fake-upstreams.ts keeps every request, which
// grows without bound under load). Plain calls are answered at once; streams
// send the real event sequence, with `streamDelayMs` between text deltas so
// that time to first token differs from time to last byte, as with a model.
// Run alone: node --import tsx bench/fake-upstream.ts [streamDelayMs]
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { listenLocal, type LocalServer } from '../test/support/local-server';

const WORDS = 'The sea at dusk keeps its own counsel, folding light into the long grey swell.'.split(' ');
const TEXT = WORDS.join(' ');
const USAGE = { input_tokens: 14, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 18 };

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function message(id: number, model: string): string {
  return JSON.stringify({
    id: `msg_bench_${id}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: TEXT }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: USAGE,
  });
}

async function stream(res: http.ServerResponse, id: number, model: string, delayMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_bench_${id}` });
  res.write(
    sse('message_start', {
      type: 'message_start',
      message: { id: `msg_bench_${id}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...USAGE, output_tokens: 1 } },
    }) + sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  );
  for (const [i, word] of WORDS.entries()) {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    const text = i === 0 ? word : ` ${word}`;
    res.write(sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }));
  }
  res.end(
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE.output_tokens } }) +
      sse('message_stop', { type: 'message_stop' }),
  );
}

export async function startFakeUpstream(streamDelayMs: number, port = 0): Promise<LocalServer> {
  let serial = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const id = ++serial;
      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'no route' } }));
        return;
      }
      let body: { model?: unknown; stream?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'body is not JSON' } }));
        return;
      }
      const model = typeof body.model === 'string' ? body.model : 'fake-model';
      if (body.stream === true) {
        void stream(res, id, model, streamDelayMs).catch(() => res.destroy());
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_bench_${id}` });
      res.end(message(id, model));
    });
  });
  server.keepAliveTimeout = 60_000;
  return listenLocal(server, port);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const upstream = await startFakeUpstream(Number(process.argv[2] ?? 0));
  process.stdout.write(`${JSON.stringify({ origin: upstream.origin })}\n`);
}
