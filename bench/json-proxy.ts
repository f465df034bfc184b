// The floor under any gateway that looks at what it forwards: the bare
// proxy plus parsing the JSON request, forwarding it re-serialised, parsing
// the upstream's JSON reply and sending it back re-serialised. No auth,
// routing, guardrails or metering. The bench drives it beside the bare proxy
// and the gateway, so the gap between bare and gateway splits into what
// reading the body costs at all and what the gateway adds on top of that.
// Run alone: node --import tsx bench/json-proxy.ts http://127.0.0.1:PORT
import http from 'node:http';
import type { LocalServer } from '../test/support/local-server';
import { listenProxy, runProxyScript } from './bare-proxy';

function readBody(stream: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}

export function startJsonProxy(upstreamOrigin: string, port = 0): Promise<LocalServer> {
  const upstream = new URL(upstreamOrigin);
  return listenProxy(port, (agent) => (req, res) => {
    void (async () => {
      const request = JSON.parse(await readBody(req)) as Record<string, unknown>;
      const body = JSON.stringify(request);
      const answer = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const forward = http.request(
          {
            agent,
            host: upstream.hostname,
            port: upstream.port,
            method: 'POST',
            path: req.url,
            headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), accept: req.headers.accept ?? '*/*' },
          },
          resolve,
        );
        forward.on('error', reject);
        res.on('close', () => {
          if (!res.writableFinished) forward.destroy();
        });
        forward.end(body);
      });
      if (request.stream === true) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const reply = JSON.stringify(JSON.parse(await readBody(answer)));
      res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(reply)) });
      res.end(reply);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });
}

await runProxyScript(import.meta.url, startJsonProxy);
