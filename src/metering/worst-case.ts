// The most a call can cost before it is made (docs/architecture.md §9): what admission
// reserves against the account's remaining credit. It must never be less
// than what metering will bill, or the credit limit would not hold.
//
// - Input, per sampling: every text, tool definition and base64 payload the
//   upstream reads is in the JSON body, and a token of the upstream's
//   tokenizer is never shorter than one UTF-8 byte, so the body's byte length
//   bounds them. On top: what the upstream adds to a prompt of its own (a
//   base of 64 tokens, and instructions for tools, structured output,
//   citations and thinking), and an allowance for each input the body names
//   but does not hold (input-allowances.ts: images, files by URL or id,
//   stored prompts, built-in tool definitions).
// - Hosted tools (web search, MCP, code execution, …) run on the upstream
//   inside the call: their results are input the body does not hold (their
//   allowances), and after each use the upstream samples again, reading the
//   whole prompt and what it wrote so far once more. So a call with one is
//   counted as up to 1 + uses samplings: the uses the request allows
//   (`max_uses`, `max_tool_calls`), else 9 (Anthropic's server-tool loop
//   stops after 10 samplings; OpenAI states none, and the same figure is
//   policy there).
// - Output: max_tokens as the upstream receives it (a thinking budget the
//   gateway sets may raise it: anthropicMaxTokens), at the output price, and
//   a chat prediction's rejected tokens.
// - Each kind at the price and unify factor of the costliest deployment the
//   call may fall back to, in the price class it may be billed at; input that
//   may write the prompt cache (`cache_control`) at the deployment's write
//   factor.
import { anthropicMaxTokens } from '../providers/anthropic/anthropic-request.mapper';
import type { CanonicalRequest } from '../core/canonical';
import type { Catalog, Decimal, Deployment, PriceTier, UnifyFactors } from '../core/catalog.types';
import { mulCeil } from '../core/decimal';
import { ALLOWANCE_KINDS, DEFAULT_INPUT_ALLOWANCES, largestAllowance } from '../core/input-allowances';
import { scanInputs } from './input-scan';
import type { InputScan } from './input-scan.types';
import { priceClassOf, type PriceClass } from './tiers';

/**
 * What an upstream adds to any prompt: a chat template's turn markers and a
 * default system prompt. Per message, role markers cost 3 to 5 tokens, less
 * than the ≥ 25 bytes of JSON each message takes in the body; what is left
 * is the reply primer (3 tokens) and a default system prompt an open model's
 * template adds (Qwen 2.5's is 20 tokens, Llama 3.1's date header 25).
 */
export const BASE_PROMPT_OVERHEAD_TOKENS = 64;
/**
 * Instructions an upstream adds for a feature the request uses: tools (the
 * most Anthropic documents is 530 tokens, Claude 3 Opus with tool_choice
 * auto; 346 for current models; open-model templates' tool preambles are 110
 * to 150), structured output, citations, extended thinking. Per feature.
 */
export const UPSTREAM_INSTRUCTIONS_TOKENS = 600;
/** Hosted-tool uses assumed when the request bounds none: Anthropic's loop samples at most 10 times per call. */
export const DEFAULT_HOSTED_USES = 9;
/** Guardrail redaction markers are at most this much longer than what they replace. */
export const REDACTION_GROWTH_BYTES = 32;
/** The fewest output tokens a lowered max_tokens keeps (below, the call is refused instead). */
export const MIN_USEFUL_OUTPUT_TOKENS = 1_024;
/**
 * The prompt of the minimal useful call (docs/architecture.md §9): a one-line question,
 * whose body is at most 192 bytes, and the 64-token base overhead.
 */
export const MINIMAL_PROMPT_TOKENS = 256;
/**
 * Input tokens a reservation counts at most: 10^13, past any upstream's
 * context windows and loops many times over, so a request stating absurd
 * bounds (`max_uses: 1e15`) is refused for its cost rather than overflowing
 * the integer arithmetic.
 */
const TOKEN_CEILING = 1e13;

export interface WorstCase {
  /** Unified tokens the call can be metered at most at the requested max_tokens (what a key's tokens-per-minute limit reserves). */
  tokens: number;
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

const greater = (a: Decimal, b: Decimal): Decimal => (a.units * 10n ** BigInt(b.scale) >= b.units * 10n ** BigInt(a.scale) ? a : b);

/**
 * How a deployment prices input in one price class: the largest factor an
 * input token can meet in the miss tier (a cache write when the body can
 * write), and one unified token more per part metering rounds up on its own.
 */
/** The largest unify factor an input token can meet in the miss tier: a cache write's when the body can write. */
function inputFactor(unify: UnifyFactors, cacheWrite: InputScan['cacheWrite']): Decimal {
  let factor = unify.input;
  if (cacheWrite !== 'none') factor = greater(factor, unify.cacheWrite5m ?? unify.input);
  if (cacheWrite === '1h') factor = greater(factor, unify.cacheWrite1h ?? unify.input);
  return factor;
}

function inputPricing(unify: UnifyFactors, prices: Record<PriceTier, Decimal>, priceClass: PriceClass, cacheWrite: InputScan['cacheWrite']) {
  const hit = prices[`${priceClass}.input_cache_hit`];
  const miss = prices[`${priceClass}.input_cache_miss`];
  const missFactor = inputFactor(unify, cacheWrite);
  let slackUnits = mulCeil(1, unify.input);
  if (cacheWrite !== 'none') {
    slackUnits += mulCeil(1, unify.cacheWrite5m ?? unify.input);
    if (cacheWrite === '1h') slackUnits += mulCeil(1, unify.cacheWrite1h ?? unify.input);
  }
  // Each tier's amount is rounded half up once more: 2 micro-units.
  const slack = amount(mulCeil(1, unify.cachedInput), hit) + amount(slackUnits, miss) + 2n;
  return (uncapped: number): bigint => {
    const tokens = Math.min(uncapped, TOKEN_CEILING);
    const asMiss = amount(mulCeil(tokens, missFactor), miss);
    const asHit = amount(mulCeil(tokens, unify.cachedInput), hit);
    return (asMiss > asHit ? asMiss : asHit) + slack;
  };
}

/** max_tokens as the deployment receives it: a thinking budget the gateway sets on an Anthropic upstream may raise it. */
function forwardedMaxTokens(request: CanonicalRequest, maxTokens: number, deployment: Deployment): number {
  if (deployment.provider.type !== 'anthropic') return maxTokens;
  return anthropicMaxTokens(maxTokens === request.maxTokens ? request : { ...request, maxTokens }, deployment);
}

/** The call may be billed as thinking: routed there, or an upstream may think (the caller enabled or allowed it, or a deployment forces it). */
function mayThink(request: CanonicalRequest, deployments: readonly Deployment[], thinkingRoute: boolean): boolean {
  if (thinkingRoute) return true;
  const setting = request.thinking?.type;
  if (setting === 'enabled' || setting === 'adaptive') return true;
  return setting === undefined && deployments.some((d) => d.thinking);
}

/** Input tokens of one sampling's prompt and of the whole call's hosted results, at one deployment's allowances. */
function allowanceTokens(scan: InputScan, deployment: Deployment): { perPass: number; once: number } {
  const table = deployment.inputAllowances ?? DEFAULT_INPUT_ALLOWANCES;
  const largest = scan.unknownPrompt > 0 || scan.unknownResults > 0 ? largestAllowance(table) : 0;
  let perPass = scan.unknownPrompt * largest;
  let once = scan.unknownResults * largest;
  for (const kind of ALLOWANCE_KINDS) {
    const inPrompt = scan.prompt[kind];
    if (inPrompt !== undefined) perPass += inPrompt * table[kind];
    const inResults = scan.results[kind];
    if (inResults !== undefined) once += inResults * table[kind];
  }
  return { perPass, once };
}

export function worstCase(input: WorstCaseInput): WorstCase {
  const { request, deployments, prices } = input;
  const scan = scanInputs(request);
  const thinks = mayThink(request, deployments, input.thinkingRoute);
  const priceClass = priceClassOf(thinks);
  const out = prices[`${priceClass}.output`];
  const samplings = scan.hosted ? 1 + (scan.statedUses ?? DEFAULT_HOSTED_USES) : 1;
  const instructions = scan.instructions + (thinks ? 1 : 0);
  // Tool search loads definitions the body holds: at most the body again.
  const body = (input.bodyBytes + input.redactions * REDACTION_GROWTH_BYTES) * (scan.searchesTools ? 2 : 1);
  const prompt = body + BASE_PROMPT_OVERHEAD_TOKENS + instructions * UPSTREAM_INSTRUCTIONS_TOKENS;

  // Per deployment: its input tokens before what the call itself writes, and its input price.
  const baseTokens: number[] = [];
  const inputCost: Array<(tokens: number) => bigint> = [];
  for (const d of deployments) {
    const { perPass, once } = allowanceTokens(scan, d);
    // Results the request's own bounds prove are read again by every later sampling.
    baseTokens.push(samplings * (prompt + perPass) + once + scan.provenResults * Math.max(1, samplings - 1));
    inputCost.push(inputPricing(d.unify, prices, priceClass, scan.cacheWrite));
  }
  // What one sampling writes, later samplings read as input.
  const rereads = samplings - 1;
  let fixedInput: bigint | null = null;
  if (rereads === 0) {
    fixedInput = 0n;
    for (let i = 0; i < deployments.length; i++) {
      const cost = inputCost[i]!(baseTokens[i]!);
      if (cost > fixedInput) fixedInput = cost;
    }
  }
  const total = (maxTokens: number): number => {
    let inputMicros = fixedInput ?? 0n;
    let outputMicros = 0n;
    for (let i = 0; i < deployments.length; i++) {
      const d = deployments[i]!;
      const sent = forwardedMaxTokens(request, maxTokens, d);
      if (fixedInput === null) {
        const cost = inputCost[i]!(baseTokens[i]! + rereads * sent);
        if (cost > inputMicros) inputMicros = cost;
      }
      const cost = amount(mulCeil(sent + scan.extraOutput, d.unify.output), out);
      if (cost > outputMicros) outputMicros = cost;
    }
    return Number(inputMicros + outputMicros);
  };
  const requested = request.maxTokens;
  // Unified tokens at the most: the costliest unify factor an input token can meet, one more per metered part for its rounding, and the output.
  let tokens = 0;
  for (let i = 0; i < deployments.length; i++) {
    const d = deployments[i]!;
    const sent = forwardedMaxTokens(request, requested, d);
    const input = Math.min(baseTokens[i]! + rereads * sent, TOKEN_CEILING);
    const factor = greater(inputFactor(d.unify, scan.cacheWrite), d.unify.cachedInput);
    const most = mulCeil(input, factor) + 2 + mulCeil(sent + scan.extraOutput, d.unify.output);
    if (most > tokens) tokens = most;
  }
  // A caller's own thinking budget must stay below max_tokens (Anthropic refuses otherwise).
  const floor = Math.min(requested, MIN_USEFUL_OUTPUT_TOKENS + (request.thinking?.type === 'enabled' ? (request.thinking.budgetTokens ?? 0) : 0));
  const micros = total(requested);
  const minimumMicros = floor === requested ? micros : total(floor);
  return {
    tokens,
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

/**
 * Micro-units of the minimal useful call (docs/architecture.md §9): MINIMAL_PROMPT_TOKENS
 * of input and MIN_USEFUL_OUTPUT_TOKENS of output (as the deployment is sent
 * them: a forced thinking budget adds its own), at the costliest deployment,
 * price class and unify factors any call can reach in the catalog. Every
 * call can ask to think, so both price classes are reachable. Computed once,
 * when the catalog loads.
 */
export function minimalCallMicros(catalog: Pick<Catalog, 'models' | 'prices'>): number {
  const minimal: CanonicalRequest = { model: '', messages: [], maxTokens: MIN_USEFUL_OUTPUT_TOKENS, stream: false };
  let most = 0n;
  const seen = new Set<Deployment>();
  for (const model of catalog.models) {
    for (const deployment of Object.values(model.routes).flat()) {
      if (seen.has(deployment)) continue;
      seen.add(deployment);
      for (const priceClass of ['no_thinking', 'thinking'] as const) {
        const input = inputPricing(deployment.unify, catalog.prices, priceClass, 'none')(MINIMAL_PROMPT_TOKENS);
        const sent = forwardedMaxTokens(minimal, MIN_USEFUL_OUTPUT_TOKENS, deployment);
        const output = amount(mulCeil(sent, deployment.unify.output), catalog.prices[`${priceClass}.output`]);
        if (input + output > most) most = input + output;
      }
    }
  }
  return Number(most);
}
