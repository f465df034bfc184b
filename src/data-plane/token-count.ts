import { mulCeil } from '../core/decimal';
import { assessComplexity } from '../routing/complexity';
import { appError } from '../errors';
import { countTokensYielding } from '../tokenizer';
import type { CanonicalRequest } from '../core/canonical';
import { contentTexts } from '../core/canonical-text';
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

/** Local counts in flight per key: counting is free for the caller, so it is bounded instead. */
const MAX_COUNTS_PER_KEY = 2;
const countsInFlight = new Map<string, number>();

/**
 * Unified input tokens of a request as the platform would bill them: the
 * tokenizer's count times the input unify factor of the deployment the
 * request would be routed to. No upstream call, no charge; scope is checked.
 * Large texts are counted piece by piece, yielding the event loop between
 * pieces, and a key has at most MAX_COUNTS_PER_KEY counts running (429 beyond).
 */
export async function countRequestTokens(pipeline: Pipeline, ctx: CallContext, request: CanonicalRequest): Promise<number> {
  const model = pipeline.resolveModel(ctx, request.model);
  const tier = assessComplexity(request, pipeline.thresholds).tier;
  const deployment = model.routes[tier][0];
  const keyId = ctx.key.keyId;
  const running = countsInFlight.get(keyId) ?? 0;
  if (running >= MAX_COUNTS_PER_KEY) {
    throw appError('tooManyTokenCounts', MAX_COUNTS_PER_KEY);
  }
  countsInFlight.set(keyId, running + 1);
  try {
    const raw = await countTokensYielding(requestText(request));
    return deployment ? mulCeil(raw, deployment.unify.input) : raw;
  } finally {
    const left = (countsInFlight.get(keyId) ?? 1) - 1;
    if (left <= 0) countsInFlight.delete(keyId);
    else countsInFlight.set(keyId, left);
  }
}
