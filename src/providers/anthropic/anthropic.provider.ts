// Anthropic Messages API upstream: `POST {base_url}/v1/messages`.
import type { CanonicalEvent } from '../../core/canonical';
import { streamOverHttp, type HttpProtocol } from '../http-protocol';
import { UpstreamError, type ProviderAdapter, type ProviderCall } from '../provider';
import { isRecord, parseEventData, UpstreamPool } from '../upstream-http';
import { anthropicBody, countTokensBody } from './anthropic-request.mapper';
import { AnthropicStreamMapper, fromAnthropicMessage } from './anthropic.mapper';

/** Sent when the caller named no version (a call from the chat form, or an old client). */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * The caller's `anthropic-version` and `anthropic-beta` go upstream with its
 * body (Claude Code's betas turn on the features its body uses); the gateway
 * key never does: the provider's own key replaces it.
 */
function anthropicHeaders(call: ProviderCall, apiKey: string | undefined): Record<string, string> {
  const source = call.request.source?.form === 'messages' ? call.request.source : undefined;
  const headers: Record<string, string> = { 'anthropic-version': source?.anthropicVersion ?? ANTHROPIC_VERSION };
  if (source?.anthropicBeta) headers['anthropic-beta'] = source.anthropicBeta;
  if (apiKey) headers['x-api-key'] = apiKey;
  return headers;
}

const ANTHROPIC: HttpProtocol = {
  path: '/v1/messages',
  headers: anthropicHeaders,
  body: (call) => anthropicBody(call.request, call.deployment, call.dropped),
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

  /** `POST {base_url}/v1/messages/count_tokens` with the caller's body (its model replaced): the upstream's exact count. */
  async countTokens(call: ProviderCall): Promise<number> {
    const { provider } = call.deployment;
    if (!provider.baseUrl) throw new UpstreamError('connect', `provider ${provider.name} has no base_url`);
    const exchange = await this.upstream.open({
      url: `${provider.baseUrl.replace(/\/+$/, '')}/v1/messages/count_tokens`,
      headers: { 'content-type': 'application/json', accept: 'application/json', ...anthropicHeaders(call, provider.apiKey) },
      body: countTokensBody(call.request, call.deployment),
      provider,
      signal: call.signal,
    });
    try {
      const reply = await exchange.json();
      const count = isRecord(reply) ? reply.input_tokens : undefined;
      if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) throw new UpstreamError('protocol', 'upstream count_tokens reply has no input_tokens');
      return count;
    } finally {
      exchange.close();
    }
  }
}
