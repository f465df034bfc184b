import type { Catalog } from '../../core/catalog.types';
import type { RawObject } from '../../core/canonical';
import { callContext, operationsIn, type DataPlaneOperation } from '../http/operation';
import { serveCall, type FormCodec, type ServeOptions } from '../http/serve-call';
import type { InboundCall, Pipeline } from '../pipeline';
import { decodeChatRequest, type ChatCompletionRequest } from './chat.decoder';
import { ChatStreamEncoder, encodeChatCompletion } from './chat.encoder';
import { guardChatBody } from './chat.guard';

const completionId = (messageId: string) => `chatcmpl-${messageId.replace(/^msg_/, '')}`;

/** The upstream speaks the chat-completions protocol: its own fields are relayed. */
const relays = (call: { route: { deployment: { provider: { type: string } } } }): boolean => call.route.deployment.provider.type === 'openai';

export function chatCodec(includeUsage: boolean): FormCodec {
  return {
    errorForm: 'openai',
    plain: (call, answer, usage) =>
      encodeChatCompletion(
        {
          id: completionId(call.messageId),
          model: call.route.deployment.model,
          content: answer.content(),
          stop: call.stopReason ?? 'end_turn',
          messageRaw: answer.messageRaw,
          usageExtra: answer.usageExtra,
          stopRaw: answer.stopRaw,
        },
        usage,
        relays(call),
      ),
    stream: (call) => {
      const encoder = new ChatStreamEncoder(completionId(call.messageId), call.route.deployment.model, includeUsage, relays(call));
      return {
        start: () => encoder.start(),
        event: (e) => encoder.event(e),
        finish: (stop, usage) => encoder.finish(stop, usage),
        error: (error) => encoder.error(error, call.requestId),
      };
    },
  };
}

/** A chat-completions call, for the pipeline. */
export function chatInbound(body: ChatCompletionRequest, defaultMaxTokens: number): InboundCall {
  return {
    model: body.model,
    stream: body.stream ?? false,
    body,
    guard: guardChatBody,
    decode: (guarded: RawObject) => decodeChatRequest(guarded as ChatCompletionRequest, defaultMaxTokens),
  };
}

export function chatHandlers(pipeline: Pipeline, catalog: Catalog, serve: ServeOptions): Record<string, DataPlaneOperation> {
  const withUsage = chatCodec(true);
  const withoutUsage = chatCodec(false);
  return operationsIn(withUsage.errorForm, {
    createChatCompletion: async ({ request, reply, body }) => {
      const chat = body as ChatCompletionRequest;
      const ctx = callContext(request, reply, 'chat_completions');
      const defaultMaxTokens = catalog.resolveModel(chat.model)?.defaultMaxTokens ?? 4096;
      const call = await pipeline.start(ctx, chatInbound(chat, defaultMaxTokens));
      await serveCall(call, chat.stream_options?.include_usage === true ? withUsage : withoutUsage, reply, request.id, serve);
      return reply;
    },
  });
}
