// The most a call can cost before it is made (DESIGN §9): what admission
// reserves against the account's remaining credit. It must never be less
// than what metering will bill, or the credit limit would not hold.
//
// - Input: every text, tool definition and base64 image the upstream reads is
//   in the JSON body, and a token of the upstream's tokenizer is never shorter
//   than one UTF-8 byte, so the body's byte length bounds its input tokens.
//   On top: the prompt an upstream adds itself (tool-use instructions), a
//   fixed allowance per image or document the upstream fetches by URL or file
//   id, and one per server tool (web search results are input the body does
//   not hold; that allowance is a bound by policy, not by proof).
// - Output: max_tokens as the upstream receives it (a deployment that forces
//   thinking may raise it), at the output price.
// - Each kind at the price and unify factor of the costliest deployment the
//   call may fall back to, in the price class it may be billed at.
import { forcesThinking, thinkingBudget } from '../providers/anthropic/anthropic-request.mapper';
import type { CanonicalContent, CanonicalRequest } from '../data-plane/canonical';
import type { Decimal, Deployment, PriceTier } from '../routing/catalog.types';
import { mulCeil } from './decimal';
import { priceClassOf } from './tiers';

/** Tokens an upstream adds to a prompt of its own (Anthropic's tool-use system prompt is about 350). */
export const PROMPT_OVERHEAD_TOKENS = 2_048;
/** An image fetched by URL or file id: Anthropic resizes to at most about 1,600 tokens, OpenAI's high detail is below 2,000. */
export const MEDIA_REFERENCE_TOKENS = 2_000;
/** A document fetched by URL or file id (a PDF of 100 pages at up to 2,000 tokens a page). */
export const DOCUMENT_REFERENCE_TOKENS = 200_000;
/** A server tool (web search, web fetch, code execution): what its results may add to the input. */
export const SERVER_TOOL_TOKENS = 100_000;
/** Guardrail redaction markers are at most this much longer than what they replace. */
export const REDACTION_GROWTH_BYTES = 32;
/** The fewest output tokens a lowered max_tokens keeps (below, the call is refused instead). */
export const MIN_USEFUL_OUTPUT_TOKENS = 1_024;

export interface WorstCase {
  /** Micro-units: the call's cost at the requested max_tokens. */
  micros: number;
  /** The requested max_tokens. */
  maxTokens: number;
  /** The cost at the fewest output tokens worth lowering max_tokens to (equal to `micros` when the caller asked for no more). */
  minimumMicros: number;
  /**
   * The largest max_tokens (between the useful minimum and the requested
   * one) whose worst case fits `availableMicros`, or null when not even the
   * minimum fits.
   */
  fitOutput(availableMicros: number): { maxTokens: number; micros: number } | null;
}

export interface WorstCaseInput {
  request: CanonicalRequest;
  /** Every deployment the call may be answered by (its tier's routes, fallbacks included). */
  deployments: readonly Deployment[];
  prices: Record<PriceTier, Decimal>;
  /** The request body's bytes as received. */
  bodyBytes: number;
  /** Guardrail redactions made in the body. */
  redactions: number;
  /** The call is routed to the thinking tier. */
  thinkingRoute: boolean;
}

/** tokens × price in micro-units, rounded half up as metering rounds each tier. */
function amount(tokens: number, price: Decimal): bigint {
  const denominator = 10n ** BigInt(price.scale);
  return (2n * BigInt(tokens) * price.units + denominator) / (2n * denominator);
}

/** One unified token more in each input tier than the sum of its parts (each part is rounded up on its own). */
function splitSlack(hit: Decimal, miss: Decimal, hitFactor: Decimal, missFactor: Decimal): bigint {
  return amount(mulCeil(1, hitFactor), hit) + amount(mulCeil(1, missFactor), miss) + 2n;
}

export function inputTokenBound(request: CanonicalRequest, bodyBytes: number, redactions: number): number {
  let tokens = bodyBytes + redactions * REDACTION_GROWTH_BYTES + PROMPT_OVERHEAD_TOKENS;
  const visit = (blocks: readonly CanonicalContent[]): void => {
    for (const block of blocks) {
      if (block.type === 'image' && block.source.kind !== 'base64') tokens += MEDIA_REFERENCE_TOKENS;
      else if (block.type === 'document') {
        if (block.source.kind === 'url' || block.source.kind === 'file') tokens += DOCUMENT_REFERENCE_TOKENS;
        else if (block.source.kind === 'content') visit(block.source.content);
      } else if (block.type === 'tool_result') visit(block.content);
    }
  };
  for (const message of request.messages) visit(message.content);
  for (const tool of request.tools ?? []) if (tool.kind !== undefined && tool.kind !== 'custom') tokens += SERVER_TOOL_TOKENS;
  return tokens;
}

/** max_tokens as the deployment receives it: one that forces thinking on an Anthropic upstream adds the budget when the caller's allowance is below it. */
function forwardedMaxTokens(request: CanonicalRequest, maxTokens: number, deployment: Deployment): number {
  if (deployment.provider.type !== 'anthropic' || !forcesThinking(request, deployment)) return maxTokens;
  return thinkingBudget({ ...request, maxTokens }).maxTokens;
}

/** The call may be billed as thinking: routed there, or an upstream may think (the caller enabled or allowed it, or a deployment forces it). */
function mayThink(request: CanonicalRequest, deployments: readonly Deployment[], thinkingRoute: boolean): boolean {
  if (thinkingRoute) return true;
  const setting = request.thinking?.type;
  if (setting === 'enabled' || setting === 'adaptive') return true;
  return setting === undefined && deployments.some((d) => d.thinking);
}

export function worstCase(input: WorstCaseInput): WorstCase {
  const { request, deployments, prices } = input;
  const priceClass = priceClassOf(mayThink(request, deployments, input.thinkingRoute));
  const hit = prices[`${priceClass}.input_cache_hit`];
  const miss = prices[`${priceClass}.input_cache_miss`];
  const out = prices[`${priceClass}.output`];
  const inputTokens = inputTokenBound(request, input.bodyBytes, input.redactions);

  let inputMicros = 0n;
  for (const d of deployments) {
    const asMiss = amount(mulCeil(inputTokens, d.unify.input), miss);
    const asHit = amount(mulCeil(inputTokens, d.unify.cachedInput), hit);
    const bound = (asMiss > asHit ? asMiss : asHit) + splitSlack(hit, miss, d.unify.cachedInput, d.unify.input);
    if (bound > inputMicros) inputMicros = bound;
  }
  const outputMicros = (maxTokens: number): bigint => {
    let most = 0n;
    for (const d of deployments) {
      const cost = amount(mulCeil(forwardedMaxTokens(request, maxTokens, d), d.unify.output), out);
      if (cost > most) most = cost;
    }
    return most;
  };
  const total = (maxTokens: number): number => Number(inputMicros + outputMicros(maxTokens));
  const requested = request.maxTokens;
  // A caller's own thinking budget must stay below max_tokens (Anthropic refuses otherwise).
  const floor = Math.min(requested, MIN_USEFUL_OUTPUT_TOKENS + (request.thinking?.type === 'enabled' ? (request.thinking.budgetTokens ?? 0) : 0));
  const micros = total(requested);
  const minimumMicros = total(floor);
  return {
    micros,
    maxTokens: requested,
    minimumMicros,
    fitOutput(available) {
      if (micros <= available) return { maxTokens: requested, micros };
      if (floor >= requested || minimumMicros > available) return null;
      // Above the floor the cost only grows with max_tokens (a forced thinking budget is below it): the largest that fits, by bisection.
      let lo = floor;
      let hi = requested;
      while (hi - lo > 1) {
        const mid = lo + Math.floor((hi - lo) / 2);
        if (total(mid) <= available) lo = mid;
        else hi = mid;
      }
      return { maxTokens: lo, micros: total(lo) };
    },
  };
}
