// Who a request is from: the socket's address, or, behind proxies named in
// GATEWAY_TRUSTED_PROXIES, the client their X-Forwarded-For names (walked
// from the right, stopping at the first address that is not a trusted
// proxy). Fastify's `request.ip` (login throttling, audit) and the data
// plane's fast path (body limits per client) both use this one trust test.
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

export type TrustProxy = (address: string, hop: number) => boolean;

export interface ClientAddresses {
  /** Fastify's `trustProxy`, or undefined when no proxy is trusted (then `request.ip` is the socket's address). */
  trust: TrustProxy | undefined;
  of(request: IncomingMessage): string;
}

export function clientAddresses(trustedProxies: readonly string[]): ClientAddresses {
  if (trustedProxies.length === 0) return { trust: undefined, of: (request) => request.socket.remoteAddress ?? '' };
  const trust = proxyAddr.compile([...trustedProxies]);
  return { trust, of: (request) => proxyAddr(request, trust) };
}
