// OpenAI Chat Completions upstream (OpenAI or any compatible server):
// `POST {base_url}/chat/completions`, where base_url already ends in /v1.
import type { CanonicalEvent } from '../../data-plane/canonical';
import { streamOverHttp, type HttpProtocol } from '../http-protocol';
import { UpstreamError, type ProviderAdapter, type ProviderCall } from '../provider';
import { parseEventData, UpstreamPool } from '../upstream-http';
import { openAiBody } from './openai-request.mapper';
import { fromOpenAiCompletion, OpenAiStreamMapper } from './openai.mapper';

const OPENAI: HttpProtocol = {
  path: '/chat/completions',
  // Local servers need no key.
  headers: (_call, apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  body: (call) => openAiBody(call.request, call.deployment, call.dropped),
  fromJson: fromOpenAiCompletion,
  async *fromStream(exchange) {
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
  },
};

export class OpenAiProvider implements ProviderAdapter {
  /** Keep-alive connections; the registry hands every network adapter the same pool. */
  constructor(private readonly upstream: UpstreamPool = new UpstreamPool()) {}

  stream(call: ProviderCall): AsyncGenerator<CanonicalEvent> {
    return streamOverHttp(this.upstream, OPENAI, call);
  }
}
