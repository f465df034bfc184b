import { mulCeil } from '../metering/decimal';
import { assessComplexity } from '../routing/complexity';
import { countTokens } from '../tokenizer';
import type { CanonicalRequest } from './canonical';
import { contentTexts } from './canonical-text';
import type { CallContext } from './call';
import type { Pipeline } from './pipeline';

/** The text of a request as the tokenizer sees it: system, every block, tool definitions. */
export function requestText(request: CanonicalRequest): string {
  const parts: string[] = [];
  if (request.system) parts.push(request.system);
  for (const m of request.messages) {
    contentTexts(m.content, parts);
    for (const c of m.content) {
      if (c.type === 'tool_use') parts.push(c.name, JSON.stringify(c.input));
      else if (c.type === 'thinking') parts.push(c.thinking);
    }
  }
  for (const t of request.tools ?? []) parts.push(t.name, t.description ?? '', JSON.stringify(t.inputSchema));
  return parts.join('\n');
}

/**
 * Unified input tokens of a request as the platform would bill them: the
 * tokenizer's count times the input unify factor of the deployment the
 * request would be routed to. No upstream call, no charge; scope is checked.
 */
export function countRequestTokens(pipeline: Pipeline, ctx: CallContext, request: CanonicalRequest): number {
  const model = pipeline.resolveModel(ctx, request.model);
  const tier = assessComplexity(request, pipeline.thresholds).tier;
  const deployment = model.routes[tier][0];
  const raw = countTokens(requestText(request));
  return deployment ? mulCeil(raw, deployment.unify.input) : raw;
}
