// The request side of the OpenAI Responses API, for Responses-form calls to
// an `openai` provider that speaks it (`responses: true` in the catalog): the
// caller's body passes through with only what the gateway owns changed.
import type { CanonicalRequest, RawObject } from '../../core/canonical';
import type { Deployment } from '../../core/catalog.types';
import { isRecord } from '../upstream-http';

/**
 * The body for `POST {base_url}/responses`: the caller's own (after input
 * guardrails) with the deployment's model; `store: false`, since the gateway
 * offers no way to read a stored response back (the caller's own `false`, or
 * nothing, which the API would take as `true`); a `max_output_tokens` the
 * gateway lowered, or set where credit was reserved for it; and the reasoning a deployment forces when the caller
 * chose none.
 */
export function responsesBody(request: CanonicalRequest, deployment: Deployment): RawObject {
  const source = request.source!.body;
  const body: RawObject = { ...source, model: deployment.model, store: false, stream: request.stream };
  if (request.source!.keepReasoning && !request.source!.encryptedReasoning) {
    body.include = [...(Array.isArray(source.include) ? (source.include as unknown[]) : []), 'reasoning.encrypted_content'];
  }
  // One output bound: the max_output_tokens reserved for (the caller's, or lowered), or where the caller set none, the one credit was reserved for.
  if (source.max_output_tokens != null || request.boundOutput) body.max_output_tokens = request.maxTokens;
  const reasoning = isRecord(source.reasoning) ? source.reasoning : undefined;
  if (deployment.thinking && request.thinking === undefined && reasoning?.effort == null) {
    body.reasoning = { ...reasoning, effort: 'high' };
    // Reasoning models reject sampling parameters; the effort replaces them.
    delete body.temperature;
    delete body.top_p;
  }
  return body;
}
