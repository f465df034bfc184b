// The model catalog (docs/architecture.md §16.6): a contract operators write and outside tests
// rely on. `routing/catalog.ts` parses the JSON file into these types.
import type { InputAllowances } from './input-allowances';

export const TIERS = ['light', 'standard', 'heavy', 'thinking'] as const;
export type Tier = (typeof TIERS)[number];

export const PRICE_TIERS = [
  'no_thinking.input_cache_hit',
  'no_thinking.input_cache_miss',
  'no_thinking.output',
  'thinking.input_cache_hit',
  'thinking.input_cache_miss',
  'thinking.output',
] as const;
export type PriceTier = (typeof PRICE_TIERS)[number];

/** An exact decimal, e.g. "0.5" = { units: 5n, scale: 1 } meaning 5 / 10^1. */
export interface Decimal {
  units: bigint;
  scale: number;
  text: string;
}

export type ProviderType = 'anthropic' | 'openai' | 'mock';

export interface MockBehaviour {
  /** Delay before the first event, ms. */
  latencyMs: number;
  /** Delay between streamed chunks, ms. */
  chunkDelayMs: number;
  /** Characters of reply text per streamed chunk. */
  chunkChars: number;
  /** Fail this share of calls (0..1) before the first byte with `failStatus`. */
  failRate: number;
  failStatus: number;
  /** Drop the connection after this many chunks (a mid-stream reset); null = never. */
  resetAfterChunks: number | null;
}

/** Circuit breaker settings (docs/architecture.md §5: a deployment that keeps failing is cooled down). */
export interface BreakerOptions {
  /** Consecutive failures before first byte that open the circuit. */
  threshold: number;
  /** How long an open circuit refuses calls before one probe is let through. */
  cooldownMs: number;
}

export interface ProviderConfig {
  name: string;
  type: ProviderType;
  /** Anthropic: without /v1. OpenAI-compatible: with /v1. Unused for mock. */
  baseUrl: string | undefined;
  /** Name of the environment variable holding the upstream key. */
  apiKeyEnv: string | undefined;
  /** Resolved at load time from `api_key_env`; never logged. */
  apiKey: string | undefined;
  /** Timeout until the upstream's response headers, ms. */
  connectTimeoutMs: number;
  /** Longest silence between streamed bytes, ms. */
  idleTimeoutMs: number;
  mock: MockBehaviour;
  /** This provider's deployments' breaker settings, when they differ from the catalog's. */
  breaker?: BreakerOptions;
  /** Input allowances this provider's deployments take over the defaults (`input_allowances`, tokens by kind). */
  inputAllowances?: Partial<InputAllowances>;
  /**
   * `openai` only: the server also speaks the Responses API
   * (`POST {base_url}/responses`), so calls in the Responses form pass
   * through to it; other forms still use Chat Completions.
   */
  responses?: boolean;
}

export interface UnifyFactors {
  input: Decimal;
  cachedInput: Decimal;
  output: Decimal;
  /**
   * Prompt-cache writes (Anthropic `cache_creation`), billed in the input
   * cache-miss tier at what the provider charges for them: 5-minute and
   * 1-hour writes. Absent: as `input` (catalogs set them on every deployment:
   * 1.25 and 2 × `input` on `anthropic` ones unless stated).
   */
  cacheWrite5m?: Decimal;
  cacheWrite1h?: Decimal;
}

export interface Deployment {
  provider: ProviderConfig;
  /** Upstream model id sent to the provider. */
  model: string;
  /**
   * The deployment thinks: the gateway asks the upstream for extended thinking
   * when the caller chose no thinking setting (never over `disabled`). The
   * call bills as thinking when the upstream thought.
   */
  thinking: boolean;
  unify: UnifyFactors;
  /**
   * What the worst case allows, in tokens, for each input the upstream adds
   * beyond the request body (hosted tools' results, files and images it
   * fetches, built-in definitions): the defaults, the provider's and the
   * deployment's own `input_allowances`. Absent: the defaults.
   */
  inputAllowances?: InputAllowances;
}

export interface ModelEntry {
  name: string;
  displayName: string;
  createdAt: string;
  /** Default max_tokens for forms where it is optional. */
  defaultMaxTokens: number;
  /** Every tier resolved: a tier with no routes falls back to the nearest tier that has some. */
  routes: Record<Tier, Deployment[]>;
  /** Other names clients may send for this model: exact names, or `*` globs such as `claude-sonnet-*`. */
  aliases: string[];
}

export interface AssessmentThresholds {
  /** Scores at or above these pick the tier; below `standard` is light. */
  standard: number;
  heavy: number;
}

export type GuardrailPolicy = 'block' | 'redact' | 'flag' | 'off';

export interface Catalog {
  currency: string;
  prices: Record<PriceTier, Decimal>;
  providers: Record<string, ProviderConfig>;
  models: ModelEntry[];
  modelsByName: ReadonlyMap<string, ModelEntry>;
  /**
   * The neutral model a name a client sent stands for: the model of that name,
   * else the model listing it as an exact alias, else the model whose
   * matching glob is the most specific (most characters besides `*`; on a tie
   * the earlier model in the catalog). Undefined when none matches.
   */
  resolveModel(name: string): ModelEntry | undefined;
  assessment: AssessmentThresholds;
  /** Breaker settings of every deployment whose provider sets none. */
  breaker: BreakerOptions;
  /** Catalog-wide guardrail policy overrides per detector rule, and the block list. */
  guardrails: { policies: Partial<Record<string, GuardrailPolicy>>; blockList: string[] };
  /** Problems that do not stop start-up (e.g. an unset `api_key_env`), for the boot log. */
  warnings?: string[];
  /**
   * Micro-units of the minimal useful call (docs/architecture.md §9): a minimal prompt and
   * 1,024 output tokens at the costliest price class and unify factors any
   * call can reach in this catalog. An account whose limit less its settled
   * month-to-date is below this is at its limit.
   */
  minimalCallMicros: number;
}
