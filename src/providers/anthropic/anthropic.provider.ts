// Anthropic Messages API upstream: `POST {base_url}/v1/messages`.
import type { CanonicalEvent } from '../../data-plane/canonical';
import { UpstreamError, type ProviderAdapter, type ProviderCall } from '../provider';
import { parseEventData, UpstreamPool } from '../upstream-http';
import { AnthropicStreamMapper, fromAnthropicMessage, toAnthropicRequest } from './anthropic.mapper';

export const ANTHROPIC_VERSION = '2023-06-01';

export class AnthropicProvider implements ProviderAdapter {
  /** Keep-alive connections; the registry hands every network adapter the same pool. */
  constructor(private readonly upstream: UpstreamPool = new UpstreamPool()) {}

  async *stream(call: ProviderCall): AsyncGenerator<CanonicalEvent> {
    const { provider } = call.deployment;
    if (!provider.baseUrl) throw new UpstreamError('connect', `provider ${provider.name} has no base_url`);
    // Only the provider's own key goes upstream; the caller's gateway key
    // never leaves the gateway.
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: call.request.stream ? 'text/event-stream' : 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
    };
    if (provider.apiKey) headers['x-api-key'] = provider.apiKey;
    const exchange = await this.upstream.open({
      url: `${provider.baseUrl.replace(/\/+$/, '')}/v1/messages`,
      headers,
      body: toAnthropicRequest(call.request, call.deployment),
      provider,
      signal: call.signal,
    });
    try {
      if (!call.request.stream || exchange.isJson) {
        yield* fromAnthropicMessage(await exchange.json());
        return;
      }
      const mapper = new AnthropicStreamMapper();
      for await (const event of exchange.events()) {
        yield* mapper.push(event.event, parseEventData(event));
        if (mapper.done) {
          await exchange.drain();
          return;
        }
      }
      throw new UpstreamError('protocol', 'upstream stream ended before message_stop');
    } finally {
      exchange.close();
    }
  }
}
