import type { IncomingHttpHeaders } from 'node:http';
import type { InboundCall, Pipeline } from '../pipeline';
import { callContext, operationsIn, type DataPlaneOperation } from '../http/operation';
import { serveCall, type FormCodec, type ServeOptions } from '../http/serve-call';
import { countRequestTokens } from '../token-count';
import type { RawObject } from '../../core/canonical';
import { decodeMessagesBody, decodeMessagesRequest, type AnthropicHeaders, type CountTokensRequest, type MessagesRequest } from './messages.decoder';
import { encodeMessage, MessagesStreamEncoder } from './messages.encoder';
import { guardMessagesBody } from './messages.guard';

/** The upstream speaks the Messages protocol: its own fields, blocks and events are relayed. */
const relays = (call: { route: { deployment: { provider: { type: string } } } }): boolean => call.route.deployment.provider.type === 'anthropic';

export const messagesCodec: FormCodec = {
  errorForm: 'anthropic',
  plain: (call, answer, usage) =>
    encodeMessage(
      {
        id: call.messageId,
        model: call.route.deployment.model,
        blocks: answer.blocks(),
        stopReason: call.stopReason ?? 'end_turn',
        stopSequence: call.stopSequence,
        messageRaw: answer.messageRaw,
        usageExtra: answer.usageExtra,
        stopRaw: answer.stopRaw,
      },
      usage,
      relays(call),
    ),
  stream: (call) => {
    const encoder = new MessagesStreamEncoder(relays(call));
    return {
      start: (usage) => encoder.start(call.messageId, call.route.deployment.model, usage),
      event: (e) => encoder.event(e),
      finish: (stop, usage) => encoder.finish(stop, usage),
      error: (error) => encoder.error(error, call.requestId),
    };
  },
};

/** The caller's Anthropic version and betas, forwarded to Anthropic upstreams (Claude Code's betas turn on what its body uses). */
export function anthropicHeaders(headers: IncomingHttpHeaders): AnthropicHeaders {
  const version = headers['anthropic-version'];
  const beta = headers['anthropic-beta'];
  return {
    ...(typeof version === 'string' && version !== '' ? { version } : {}),
    ...(beta !== undefined && beta !== '' ? { beta: Array.isArray(beta) ? beta.join(',') : beta } : {}),
  };
}

/** A Messages-form call, for the pipeline. */
export function messagesInbound(body: MessagesRequest, headers: IncomingHttpHeaders): InboundCall {
  return {
    model: body.model,
    stream: body.stream ?? false,
    body,
    guard: guardMessagesBody,
    decode: (guarded: RawObject) => decodeMessagesRequest(guarded as MessagesRequest, anthropicHeaders(headers)),
  };
}

export function messagesHandlers(pipeline: Pipeline, serve: ServeOptions): Record<string, DataPlaneOperation> {
  return operationsIn(messagesCodec.errorForm, {
    createMessage: async ({ request, reply, body }) => {
      const ctx = callContext(request, reply, 'messages');
      const call = await pipeline.start(ctx, messagesInbound(body as MessagesRequest, request.headers));
      await serveCall(call, messagesCodec, reply, request.id, serve);
      return reply;
    },
    countMessageTokens: async ({ request, reply, body }) => {
      const ctx = callContext(request, reply, 'messages');
      const headers = anthropicHeaders(request.headers);
      const count = body as CountTokensRequest;
      const decode = (guarded: RawObject) => decodeMessagesBody(guarded as CountTokensRequest, 1, false, headers);
      const exact = await pipeline.countUpstream(ctx, { model: count.model, stream: false, body: count, guard: guardMessagesBody, decode });
      return { input_tokens: exact ?? (await countRequestTokens(pipeline, ctx, decode(count))) };
    },
  });
}
