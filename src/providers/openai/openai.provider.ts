// OpenAI Chat Completions upstream (OpenAI or any compatible server):
// `POST {base_url}/chat/completions`, where base_url already ends in /v1.
import type { CanonicalEvent } from '../../data-plane/canonical';
import { UpstreamError, type ProviderAdapter, type ProviderCall } from '../provider';
import { parseEventData, UpstreamPool } from '../upstream-http';
import { fromOpenAiCompletion, OpenAiStreamMapper, toOpenAiRequest } from './openai.mapper';

export class OpenAiProvider implements ProviderAdapter {
  /** Keep-alive connections; the registry hands every network adapter the same pool. */
  constructor(private readonly upstream: UpstreamPool = new UpstreamPool()) {}

  async *stream(call: ProviderCall): AsyncGenerator<CanonicalEvent> {
    const { provider } = call.deployment;
    if (!provider.baseUrl) throw new UpstreamError('connect', `provider ${provider.name} has no base_url`);
    // Only the provider's own key goes upstream; local servers need none.
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: call.request.stream ? 'text/event-stream' : 'application/json',
    };
    if (provider.apiKey) headers.authorization = `Bearer ${provider.apiKey}`;
    const exchange = await this.upstream.open({
      url: `${provider.baseUrl.replace(/\/+$/, '')}/chat/completions`,
      headers,
      body: toOpenAiRequest(call.request, call.deployment),
      provider,
      signal: call.signal,
    });
    try {
      if (!call.request.stream || exchange.isJson) {
        yield* fromOpenAiCompletion(await exchange.json());
        return;
      }
      const mapper = new OpenAiStreamMapper();
      for await (const event of exchange.events()) {
        if (event.data.trim() === '[DONE]') {
          yield* mapper.finish();
          await exchange.drain();
          return;
        }
        yield* mapper.push(parseEventData(event));
      }
      // Some compatible servers close without `[DONE]`; a finished choice is
      // still a complete answer, anything less was cut off.
      if (!mapper.sawFinish) throw new UpstreamError('protocol', 'upstream stream ended before finish_reason');
      yield* mapper.finish();
    } finally {
      exchange.close();
    }
  }
}
