import type { Pipeline } from '../pipeline';
import { callContext, type DataPlaneHandler } from '../http/data-plane';
import { serveCall, type FormCodec, type ServeOptions } from '../http/serve-call';
import { countRequestTokens } from '../token-count';
import { decodeMessagesBody, decodeMessagesRequest, type CountTokensRequest, type MessagesRequest } from './messages.decoder';
import { encodeMessage, MessagesStreamEncoder } from './messages.encoder';

export const messagesCodec: FormCodec = {
  errorForm: 'anthropic',
  plain: (call, content, usage) =>
    encodeMessage(
      { id: call.messageId, model: call.route.deployment.model, content, stopReason: call.stopReason ?? 'end_turn', stopSequence: call.stopSequence },
      usage,
    ),
  stream: (call) => {
    const encoder = new MessagesStreamEncoder();
    return {
      start: (usage) => encoder.start(call.messageId, call.route.deployment.model, usage),
      event: (e) => encoder.event(e),
      finish: (stopReason, stopSequence, usage) => encoder.finish(stopReason, stopSequence, usage),
      error: (error) => encoder.error(error, call.requestId),
    };
  },
};

export function messagesHandlers(pipeline: Pipeline, serve: ServeOptions): Record<string, DataPlaneHandler> {
  return {
    createMessage: async ({ request, reply, body }) => {
      const ctx = callContext(request, reply, 'messages');
      const call = await pipeline.start(ctx, decodeMessagesRequest(body as MessagesRequest));
      await serveCall(call, messagesCodec, reply, request.id, serve);
      return reply;
    },
    countMessageTokens: async ({ request, reply, body }) => {
      const ctx = callContext(request, reply, 'messages');
      const canonical = decodeMessagesBody(body as CountTokensRequest, 1, false);
      return { input_tokens: countRequestTokens(pipeline, ctx, canonical) };
    },
  };
}
