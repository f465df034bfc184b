import type { Catalog } from '../../core/catalog.types';
import type { Call } from '../call';
import type { RawObject } from '../../core/canonical';
import { callContext, operationsIn, type DataPlaneOperation } from '../http/operation';
import { serveCall, type FormCodec, type ServeOptions } from '../http/serve-call';
import type { InboundCall, Pipeline } from '../pipeline';
import type { StatefulCall, StatefulResponses } from '../stored/stateful-responses';
import { decodeResponsesRequest, type ResponsesRequest } from './responses.decoder';
import { requestEcho, type ResponsesEncoderOptions } from './responses-object';
import { encodeResponse, ResponsesEncoder } from './responses.encoder';
import { guardResponsesBody } from './responses.guard';

/** The upstream speaks the Responses protocol (an `openai` provider with `responses: true`): its own items and fields are relayed. */
export const relaysResponses = (call: { route: { deployment: { provider: { type: string; responses?: boolean } } } }): boolean =>
  call.route.deployment.provider.type === 'openai' && call.route.deployment.provider.responses === true;

/** What the Response shows of stored state, as OpenAI's does. */
const stateEcho = (state: StatefulCall): RawObject => ({
  store: state.store,
  previous_response_id: state.previousResponseId,
  conversation: state.conversationId === null ? null : { id: state.conversationId },
});

/** A Responses call's encoders; the final Response is kept (store) and added to its conversation before the reply ends. */
/** The Responses form answers errors in OpenAI's shape. */
const RESPONSES_ERRORS = 'openai';

function responsesCodec(state: StatefulCall, stateful: StatefulResponses): FormCodec {
  let kept: Promise<unknown> = Promise.resolve();
  const options = (call: Call): ResponsesEncoderOptions => {
    const source = call.request.source;
    const keep = state.store || state.conversationId !== null;
    return {
      id: state.responseId,
      model: call.route.deployment.model,
      echo: requestEcho(source?.body ?? {}),
      relay: relaysResponses(call),
      encryptedReasoning: source?.encryptedReasoning === true,
      tools: call.request.tools ?? [],
      state: stateEcho(state),
      ...(keep
        ? {
            onFinal: (response: RawObject, output: RawObject[]) => {
              kept = stateful.keep({ accountId: call.accountId, apiKeyId: call.apiKeyId, requestId: call.requestId }, state, source?.body.input, response, output);
            },
          }
        : {}),
    };
  };
  return {
    errorForm: RESPONSES_ERRORS,
    settled: () => kept,
    plain: (call, answer, usage) => {
      const relay = relaysResponses(call);
      const base = options(call);
      const echo = relay && answer.messageRaw ? { ...answer.messageRaw, ...answer.stopRaw?.event } : base.echo;
      return encodeResponse({ ...base, echo }, answer.blocks(), call.stopReason ?? 'end_turn', usage, relay ? answer.usageExtra : undefined);
    },
    stream: (call) => {
      const encoder = new ResponsesEncoder(options(call));
      return {
        start: () => encoder.start(),
        event: (e) => encoder.push(e),
        finish: (stop, usage) => encoder.finish(stop, usage),
        error: (error) => encoder.error(error, call.requestId),
      };
    },
  };
}

/** A Responses-form call, for the pipeline. */
export function responsesInbound(body: ResponsesRequest, defaultMaxTokens: number, keepReasoning = false): InboundCall {
  return {
    model: body.model,
    stream: body.stream ?? false,
    body,
    guard: guardResponsesBody,
    decode: (guarded: RawObject) => {
      const request = decodeResponsesRequest(guarded as ResponsesRequest, defaultMaxTokens);
      if (keepReasoning && request.source) request.source.keepReasoning = true;
      return request;
    },
  };
}

export function responsesHandlers(pipeline: Pipeline, catalog: Catalog, stateful: StatefulResponses, serve: ServeOptions): Record<string, DataPlaneOperation> {
  return operationsIn(RESPONSES_ERRORS, {
    createResponse: async ({ request, reply, body }) => {
      const ctx = callContext(request, reply, 'responses');
      // Stored context is input like any other: expanded before admission, so the reservation and the body limit see it.
      const state = await stateful.expand(ctx.key.account.id, body as ResponsesRequest, ctx.bodyBytes);
      ctx.responseId = state.responseId;
      if (state.addedBytes > 0 && ctx.bodyBytes !== undefined) ctx.bodyBytes += state.addedBytes;
      const defaultMaxTokens = catalog.resolveModel(state.body.model)?.defaultMaxTokens ?? 4096;
      const keep = state.store || state.conversationId !== null;
      const call = await pipeline.start(ctx, responsesInbound(state.body, defaultMaxTokens, keep));
      await serveCall(call, responsesCodec(state, stateful), reply, request.id, serve);
      return reply;
    },
  });
}
