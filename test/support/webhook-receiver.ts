// A local webhook endpoint for tests: records every POST (headers and raw
// body) and answers with the status the test scripts (200 by default).
import http from 'node:http';
import { listenLocal, type LocalServer } from './local-server';

export interface ReceivedHook {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver extends LocalServer {
  received: ReceivedHook[];
  /** Statuses for the next requests, in order; afterwards 200. */
  answer(...statuses: number[]): void;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const statuses: number[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  const local = await listenLocal(server);
  return { ...local, received, answer: (...next) => statuses.push(...next) };
}
