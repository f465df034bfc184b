import type { Catalog } from '../../routing/catalog.types';
import type { Call } from '../call';
import type { RawObject } from '../canonical';
import { callContext, type DataPlaneHandler } from '../http/data-plane';
import { serveCall, type FormCodec, type ServeOptions } from '../http/serve-call';
import type { InboundCall, Pipeline } from '../pipeline';
import { decodeResponsesRequest, type ResponsesRequest } from './responses.decoder';
import { requestEcho, type ResponsesEncoderOptions } from './responses-object';
import { encodeResponse, ResponsesEncoder } from './responses.encoder';
import { guardResponsesBody } from './responses.guard';

/** The upstream speaks the Responses protocol (an `openai` provider with `responses: true`): its own items and fields are relayed. */
export const relaysResponses = (call: { route: { deployment: { provider: { type: string; responses?: boolean } } } }): boolean =>
  call.route.deployment.provider.type === 'openai' && call.route.deployment.provider.responses === true;

function encoderOptions(call: Call): ResponsesEncoderOptions {
  const source = call.request.source;
  return {
    id: `resp_${call.messageId.replace(/^msg_/, '')}`,
    model: call.route.deployment.model,
    echo: requestEcho(source?.body ?? {}),
    relay: relaysResponses(call),
    encryptedReasoning: source?.encryptedReasoning === true,
    tools: call.request.tools ?? [],
  };
}

export const responsesCodec: FormCodec = {
  errorForm: 'openai',
  plain: (call, answer, usage) => {
    const relay = relaysResponses(call);
    const options = encoderOptions(call);
    const echo = relay && answer.messageRaw ? { ...answer.messageRaw, ...answer.stopRaw?.event } : options.echo;
    return encodeResponse({ ...options, echo }, answer.blocks(), call.stopReason ?? 'end_turn', usage, relay ? answer.usageExtra : undefined);
  },
  stream: (call) => {
    const encoder = new ResponsesEncoder(encoderOptions(call));
    return {
      start: () => encoder.start(),
      event: (e) => encoder.push(e),
      finish: (stop, usage) => encoder.finish(stop, usage),
      error: (error) => encoder.error(error, call.requestId),
    };
  },
};

/** A Responses-form call, for the pipeline. */
export function responsesInbound(body: ResponsesRequest, defaultMaxTokens: number): InboundCall {
  return {
    model: body.model,
    stream: body.stream ?? false,
    body,
    guard: guardResponsesBody,
    decode: (guarded: RawObject) => decodeResponsesRequest(guarded as ResponsesRequest, defaultMaxTokens),
  };
}

export function responsesHandlers(pipeline: Pipeline, catalog: Catalog, serve: ServeOptions): Record<string, DataPlaneHandler> {
  return {
    createResponse: async ({ request, reply, body }) => {
      const responses = body as ResponsesRequest;
      const ctx = callContext(request, reply, 'responses');
      const defaultMaxTokens = catalog.resolveModel(responses.model)?.defaultMaxTokens ?? 4096;
      const call = await pipeline.start(ctx, responsesInbound(responses, defaultMaxTokens));
      await serveCall(call, responsesCodec, reply, request.id, serve);
      return reply;
    },
  };
}
