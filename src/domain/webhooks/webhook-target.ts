// SSRF guard for webhook URLs: only http(s) without credentials, and only
// hosts whose every address is public — checked when the endpoint is created
// and again at each delivery, where the connection goes to the address that
// was checked (the http agent's `lookup`), so DNS rebinding cannot switch it.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { invalid } from '../../errors';

/** Resolves a host name to all its addresses. */
export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

function blockList(ranges: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>): BlockList {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return list;
}

/** Refused whatever the configuration: "this network", link-local (cloud metadata), multicast, broadcast. */
const ALWAYS_REFUSED = blockList([
  ['0.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
]);

/** Refused unless GATEWAY_WEBHOOK_ALLOW_PRIVATE=1: loopback, private, CGNAT, unique-local. */
const PRIVATE = blockList([
  ['127.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
]);

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** Why `address` may not be a webhook target, or null when it may. */
export function refusedAddress(address: string, allowPrivate: boolean): string | null {
  const mapped = MAPPED_V4.exec(address)?.[1];
  const ip = mapped ?? address;
  const family = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
  if (isIP(ip) === 0) return `${address} is not an IP address`;
  if (ALWAYS_REFUSED.check(ip, family)) return `${address} is a link-local, multicast or unspecified address`;
  if (!allowPrivate && PRIVATE.check(ip, family)) return `${address} is a loopback or private address (allowed only with GATEWAY_WEBHOOK_ALLOW_PRIVATE=1)`;
  return null;
}

export class WebhookTargetGuard {
  constructor(
    private readonly options: { allowPrivate: boolean; resolve?: Resolver },
  ) {}

  /** The parsed URL if it may be a webhook target (400 naming `url` otherwise). */
  async check(text: unknown): Promise<URL> {
    const url = parseTarget(text);
    await this.addressesOf(url.hostname).catch((error: Error) => {
      throw invalid('url', `url ${error.message}`);
    });
    return url;
  }

  /**
   * The host's addresses, each allowed; throws naming the refused one. An IP
   * literal is its own address (Node connects to it without a lookup).
   */
  async addressesOf(hostname: string): Promise<LookupAddress[]> {
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    const family = isIP(host);
    const addresses = family !== 0 ? [{ address: host, family }] : await (this.options.resolve ?? systemResolver)(host).catch(() => {
      throw new Error(`host ${host} does not resolve`);
    });
    if (addresses.length === 0) throw new Error(`host ${host} does not resolve`);
    for (const { address } of addresses) {
      const reason = refusedAddress(address, this.options.allowPrivate);
      if (reason) throw new Error(`host ${host} resolves to ${reason}`);
    }
    return addresses;
  }

  /** The http agent's `lookup`: resolves, checks, and hands Node the checked address. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.addressesOf(hostname).then(
      (addresses) => {
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: Error) => callback(Object.assign(error, { code: 'EREFUSEDTARGET' }), '', 0),
    );
  };
}

/** http or https, a host, no user name or password in it. */
export function parseTarget(text: unknown): URL {
  if (typeof text !== 'string' || text.length === 0 || text.length > 2048) throw invalid('url', 'url must be an http or https URL of at most 2048 characters');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('url', 'url is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url', 'url must use https or http');
  if (url.username !== '' || url.password !== '') throw invalid('url', 'url must not contain credentials');
  if (url.hostname === '') throw invalid('url', 'url must name a host');
  return url;
}
