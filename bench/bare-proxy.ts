// The baseline the gateway is measured against: the least a Node proxy can
// do. Reads the request body, forwards it to the upstream over a keep-alive
// pool, and pipes the answer back. No auth, routing, guardrails or metering.
// Run alone: node --import tsx bench/bare-proxy.ts http://127.0.0.1:PORT
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { listenLocal, type LocalServer } from '../test/support/local-server';

/**
 * A proxy server for the bench: `handle` gets a keep-alive agent to the
 * upstream; closing the server destroys the agent.
 */
export async function listenProxy(port: number, handle: (agent: http.Agent) => http.RequestListener): Promise<LocalServer> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer(handle(agent));
  server.keepAliveTimeout = 60_000;
  const listening = await listenLocal(server, port);
  return {
    origin: listening.origin,
    close: async () => {
      agent.destroy();
      await listening.close();
    },
  };
}

/** Run as a script (`node … proxy.ts UPSTREAM`): start, then print `{"origin": …}` as bench/run.ts expects. */
export async function runProxyScript(moduleUrl: string, start: (upstreamOrigin: string) => Promise<LocalServer>): Promise<void> {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const proxy = await start(process.argv[2] ?? 'http://127.0.0.1:8081');
  process.stdout.write(`${JSON.stringify({ origin: proxy.origin })}\n`);
}

export function startBareProxy(upstreamOrigin: string, port = 0): Promise<LocalServer> {
  const upstream = new URL(upstreamOrigin);
  return listenProxy(port, (agent) => (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = http.request(
        {
          agent,
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { 'content-type': 'application/json', 'content-length': String(body.length), accept: req.headers.accept ?? '*/*' },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      res.on('close', () => {
        if (!res.writableFinished) forward.destroy();
      });
      forward.end(body);
    });
  });
}

await runProxyScript(import.meta.url, startBareProxy);
