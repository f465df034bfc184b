// OpenAI Chat Completions upstream (OpenAI or any compatible server):
// `POST {base_url}/chat/completions`, where base_url already ends in /v1.
// A provider that also speaks the Responses API (`responses: true`) gets
// Responses-form calls as they came, at `POST {base_url}/responses`.
import type { CanonicalEvent } from '../../core/canonical';
import { streamOverHttp, type HttpProtocol } from '../http-protocol';
import { UpstreamError, type ProviderAdapter, type ProviderCall } from '../provider';
import { parseEventData, UpstreamPool } from '../upstream-http';
import { openAiBody } from './openai-request.mapper';
import { fromOpenAiCompletion, OpenAiStreamMapper } from './openai.mapper';
import { responsesBody } from './responses-request.mapper';
import { fromResponsesJson, ResponsesStreamMapper } from './responses.mapper';

/** Local servers need no key. */
const bearer = (apiKey: string | undefined): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {});

const OPENAI: HttpProtocol = {
  path: '/chat/completions',
  headers: (_call, apiKey) => bearer(apiKey),
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

const RESPONSES: HttpProtocol = {
  path: '/responses',
  headers: (_call, apiKey) => bearer(apiKey),
  body: (call) => responsesBody(call.request, call.deployment),
  fromJson: fromResponsesJson,
  async *fromStream(exchange) {
    const mapper = new ResponsesStreamMapper();
    for await (const event of exchange.events()) {
      yield* mapper.push(parseEventData(event));
      if (mapper.done) {
        await exchange.drain();
        return;
      }
    }
    throw new UpstreamError('protocol', 'upstream stream ended before response.completed');
  },
};

/** Whether a call goes to the provider's Responses API: a Responses-form call, to a provider that speaks it. */
export const speaksResponses = (call: ProviderCall): boolean => call.deployment.provider.responses === true && call.request.source?.form === 'responses';

export class OpenAiProvider implements ProviderAdapter {
  /** Keep-alive connections; the registry hands every network adapter the same pool. */
  constructor(private readonly upstream: UpstreamPool = new UpstreamPool()) {}

  stream(call: ProviderCall): AsyncGenerator<CanonicalEvent> {
    return streamOverHttp(this.upstream, speaksResponses(call) ? RESPONSES : OPENAI, call);
  }
}
