// What the network adapters share: POST the protocol's request to
// `{base_url}{path}` with only the provider's own key, then map a JSON reply
// or an SSE stream to canonical events, and always close the exchange. Each
// adapter describes its protocol; upstream-http.ts owns the clocks and the
// cancellation rules.
import type { CanonicalEvent } from '../core/canonical';
import { UpstreamError, type ProviderCall } from './provider';
import { countSentBody } from './sent-request';
import type { UpstreamExchange, UpstreamPool } from './upstream-http';

export interface HttpProtocol {
  /** Appended to the provider's base_url (its trailing slashes dropped). */
  path: string;
  /**
   * The protocol's own headers, with the provider key (when the provider has
   * one) in the header the protocol uses. The caller's gateway key never
   * leaves the gateway.
   */
  headers(call: ProviderCall, apiKey: string | undefined): Record<string, string>;
  body(call: ProviderCall): unknown;
  /** Maps a plain JSON reply: asked for, or sent by a server that ignored `stream: true`. */
  fromJson(body: unknown): Iterable<CanonicalEvent>;
  /** Maps an SSE reply up to the protocol's last event; throws when the stream stops short of it. */
  fromStream(exchange: UpstreamExchange): AsyncIterable<CanonicalEvent>;
}

export async function* streamOverHttp(upstream: UpstreamPool, protocol: HttpProtocol, call: ProviderCall): AsyncGenerator<CanonicalEvent> {
  const { provider } = call.deployment;
  if (!provider.baseUrl) throw new UpstreamError('connect', `provider ${provider.name} has no base_url`);
  const body = protocol.body(call);
  call.sent?.built(() => countSentBody(body));
  const exchange = await upstream.open({
    url: `${provider.baseUrl.replace(/\/+$/, '')}${protocol.path}`,
    headers: {
      'content-type': 'application/json',
      accept: call.request.stream ? 'text/event-stream' : 'application/json',
      ...protocol.headers(call, provider.apiKey),
    },
    body,
    provider,
    signal: call.signal,
    sent: call.sent,
  });
  try {
    if (!call.request.stream || exchange.isJson) {
      yield* protocol.fromJson(await exchange.json());
      return;
    }
    yield* protocol.fromStream(exchange);
  } finally {
    exchange.close();
  }
}
