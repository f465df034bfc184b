// An HTTP server of a test or a bench, listening on 127.0.0.1: its origin,
// and a close that drops open keep-alive connections instead of waiting for
// them to time out.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  /** http://127.0.0.1:port */
  origin: string;
  close(): Promise<void>;
}

/** Starts `server` listening on 127.0.0.1 at `port` (0: any free port). */
export async function listenLocal(server: http.Server, port = 0): Promise<LocalServer> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
