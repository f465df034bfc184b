import type { Catalog } from '../../routing/catalog.types';
import { callContext, type DataPlaneHandler } from '../http/data-plane';
import { serveCall, type FormCodec, type ServeOptions } from '../http/serve-call';
import type { Pipeline } from '../pipeline';
import { decodeChatRequest, type ChatCompletionRequest } from './chat.decoder';
import { ChatStreamEncoder, encodeChatCompletion } from './chat.encoder';

const completionId = (messageId: string) => `chatcmpl-${messageId.replace(/^msg_/, '')}`;

export function chatCodec(includeUsage: boolean): FormCodec {
  return {
    errorForm: 'openai',
    plain: (call, content, usage) =>
      encodeChatCompletion(completionId(call.messageId), call.route.deployment.model, content, call.stopReason ?? 'end_turn', usage),
    stream: (call) => {
      const encoder = new ChatStreamEncoder(completionId(call.messageId), call.route.deployment.model, includeUsage);
      return {
        start: () => encoder.start(),
        event: (e) => encoder.event(e),
        finish: (stop, _sequence, usage) => encoder.finish(stop, usage),
        error: (error) => encoder.error(error, call.requestId),
      };
    },
  };
}

export function chatHandlers(pipeline: Pipeline, catalog: Catalog, serve: ServeOptions): Record<string, DataPlaneHandler> {
  const withUsage = chatCodec(true);
  const withoutUsage = chatCodec(false);
  return {
    createChatCompletion: async ({ request, reply, body }) => {
      const chat = body as ChatCompletionRequest;
      const ctx = callContext(request, reply, 'chat_completions');
      const defaultMaxTokens = catalog.modelsByName.get(chat.model)?.defaultMaxTokens ?? 4096;
      const call = await pipeline.start(ctx, decodeChatRequest(chat, defaultMaxTokens));
      await serveCall(call, chat.stream_options?.include_usage === true ? withUsage : withoutUsage, reply, request.id, serve);
      return reply;
    },
  };
}
