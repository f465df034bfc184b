// Who a request is from: the socket's address, or, behind proxies named in
// GATEWAY_TRUSTED_PROXIES, the client their X-Forwarded-For names (walked
// from the right, stopping at the first address that is not a trusted
// proxy). Fastify's `request.ip` (login throttling, audit) and the data
// plane's fast path (body limits per client) both use this one trust test,
// and the login throttle and the body budget count a client the same way.
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

/** A client for throttling: an IPv4 address as is, an IPv6 address by its /64 prefix. */
export function throttleClient(ip: string): string {
  const address = ip.split('%')[0] ?? ip;
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...new Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
