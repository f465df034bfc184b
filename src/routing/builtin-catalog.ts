// The catalog `npm start` uses when GATEWAY_CATALOG is unset. It is written in
// the file format and goes through the same validation as an operator's file,
// so the offline demo cannot drift from what a real catalog accepts.
import type { Env } from './catalog-reader';

/** The unit prices of `catalog.example.json` (docs/architecture.md §16.6), in CNY per million unified tokens. */
export const BUILTIN_PRICES = {
  'no_thinking.input_cache_hit': '0.5',
  'no_thinking.input_cache_miss': '2',
  'no_thinking.output': '8',
  'thinking.input_cache_hit': '1',
  'thinking.input_cache_miss': '4',
  'thinking.output': '16',
} as const;

interface RouteJson {
  provider: string;
  model: string;
  thinking?: boolean;
  unify?: { input?: number; cached_input?: number; output?: number };
}

const small: RouteJson = { provider: 'sim', model: 'sim-small', unify: { input: 0.25, output: 0.25 } };
const medium: RouteJson = { provider: 'sim', model: 'sim-medium' };
const large: RouteJson = { provider: 'sim', model: 'sim-large', unify: { input: 2, output: 2 } };
const largeThinking: RouteJson = { ...large, thinking: true };

// Unify factors of the real upstreams approximate their list prices relative
// to the unified price list above, so a unified token costs the gateway
// about the same whichever deployment served it. Operators tune these in
// their own catalog file.
const claude = (thinking: boolean): RouteJson => ({
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  thinking,
  unify: { input: 10, cached_input: 4, output: 13 },
});
const gpt = (thinking: boolean): RouteJson =>
  thinking
    ? { provider: 'openai', model: 'o4-mini', thinking: true, unify: { input: 2, output: 2 } }
    : { provider: 'openai', model: 'gpt-4.1', unify: { input: 7, output: 7 } };

/** The real upstreams, each named after its provider type, used when its key variable is set. */
const REAL_UPSTREAMS = [
  { type: 'anthropic', keyEnv: 'ANTHROPIC_API_KEY', urlEnv: 'ANTHROPIC_BASE_URL', defaultUrl: 'https://api.anthropic.com', route: claude },
  { type: 'openai', keyEnv: 'OPENAI_API_KEY', urlEnv: 'OPENAI_BASE_URL', defaultUrl: 'https://api.openai.com/v1', route: gpt },
] as const;

/** The built-in catalog in file form; real upstreams appear only when their key is set. */
export function builtinCatalogJson(env: Env): Record<string, unknown> {
  const providers: Record<string, unknown> = {
    sim: { type: 'mock', mock: { latency_ms: 20, chunk_delay_ms: 5 } },
  };
  // Real deployments go first so they serve traffic, with the mock behind them
  // as the fallback that keeps the demo answering when the upstream is down.
  const real: Array<(thinking: boolean) => RouteJson> = [];
  for (const upstream of REAL_UPSTREAMS) {
    if (!env[upstream.keyEnv]) continue;
    providers[upstream.type] = {
      type: upstream.type,
      base_url: env[upstream.urlEnv] || upstream.defaultUrl,
      api_key_env: upstream.keyEnv,
      // OpenAI itself speaks the Responses API; a compatible server at OPENAI_BASE_URL may not.
      ...(upstream.type === 'openai' && !env[upstream.urlEnv] ? { responses: true } : {}),
    };
    real.push(upstream.route);
  }
  const first = (thinking: boolean): RouteJson[] => real.map((make) => make(thinking));

  return {
    currency: 'CNY',
    prices: { ...BUILTIN_PRICES },
    providers,
    models: [
      {
        name: 'tsxt-general',
        display_name: 'General assistant',
        // Clients that send vendor names by default (Claude Code's main model,
        // OpenAI SDK examples) reach the general model without --model.
        aliases: ['claude-*', 'gpt-*', 'chatgpt-*', 'o1*', 'o3*', 'o4*'],
        routes: {
          light: [small],
          standard: [...first(false), medium],
          heavy: [...first(false), large],
          thinking: [...first(true), largeThinking],
        },
      },
      {
        name: 'tsxt-fast',
        display_name: 'Fast replies',
        // Claude Code's small/fast model and the mini models: more specific globs than the general model's, so they win.
        aliases: ['claude-*haiku*', 'gpt-*mini*', 'gpt-*nano*'],
        routes: { light: [small], standard: [medium] },
      },
      {
        name: 'tsxt-code',
        display_name: 'Code assistant',
        routes: { standard: [medium], heavy: [large], thinking: [largeThinking] },
      },
    ],
  };
}
