// Anthropic Messages API upstream: `POST {base_url}/v1/messages`.
import type { CanonicalEvent } from '../../data-plane/canonical';
import { streamOverHttp, type HttpProtocol } from '../http-protocol';
import { UpstreamError, type ProviderAdapter, type ProviderCall } from '../provider';
import { parseEventData, UpstreamPool } from '../upstream-http';
import { AnthropicStreamMapper, fromAnthropicMessage, toAnthropicRequest } from './anthropic.mapper';

export const ANTHROPIC_VERSION = '2023-06-01';

const ANTHROPIC: HttpProtocol = {
  path: '/v1/messages',
  headers: (apiKey) => ({ 'anthropic-version': ANTHROPIC_VERSION, ...(apiKey ? { 'x-api-key': apiKey } : {}) }),
  body: (call) => toAnthropicRequest(call.request, call.deployment),
  fromJson: fromAnthropicMessage,
  async *fromStream(exchange) {
    const mapper = new AnthropicStreamMapper();
    for await (const event of exchange.events()) {
      yield* mapper.push(event.event, parseEventData(event));
      if (mapper.done) {
        await exchange.drain();
        return;
      }
    }
    throw new UpstreamError('protocol', 'upstream stream ended before message_stop');
  },
};

export class AnthropicProvider implements ProviderAdapter {
  /** Keep-alive connections; the registry hands every network adapter the same pool. */
  constructor(private readonly upstream: UpstreamPool = new UpstreamPool()) {}

  stream(call: ProviderCall): AsyncGenerator<CanonicalEvent> {
    return streamOverHttp(this.upstream, ANTHROPIC, call);
  }
}
