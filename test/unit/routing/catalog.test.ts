import { expect } from 'chai';
import { ROUTING_MODEL } from '../../../src/routing/routing-model';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_PRICES } from '../../../src/routing/builtin-catalog';
import {
  CatalogError,
  DEFAULT_CREATED_AT,
  builtinCatalog,
  fallbackOrder,
  loadCatalog,
  parseCatalog,
  resolveTiers,
} from '../../../src/routing/catalog';
import { PRICE_TIERS, TIERS, type Catalog, type Tier } from '../../../src/core/catalog.types';

const EXAMPLE_PATH = fileURLToPath(new URL('../../../catalog.example.json', import.meta.url));

/** `catalog.example.json` (docs/architecture.md §16.6), as an object each test may change freely. */
function example(): Record<string, any> {
  return {
    currency: 'CNY',
    prices: { ...BUILTIN_PRICES },
    providers: {
      sim: { type: 'mock' },
      claude: { type: 'anthropic', base_url: 'https://anthropic.example', api_key_env: 'ANTHROPIC_API_KEY' },
      local: { type: 'openai', base_url: 'http://127.0.0.1:8000/v1', api_key_env: 'LOCAL_LLM_KEY' },
    },
    models: [
      {
        name: 'tsxt-general',
        display_name: 'General assistant',
        routes: {
          light: [{ provider: 'sim', model: 'sim-small', unify: { input: 0.25, output: 0.25 } }],
          standard: [
            { provider: 'claude', model: 'claude-x' },
            { provider: 'sim', model: 'sim-medium' },
          ],
          heavy: [{ provider: 'local', model: 'qwen-large' }],
          thinking: [{ provider: 'claude', model: 'claude-x', thinking: true }],
        },
      },
    ],
  };
}

function errorOf(action: () => unknown): CatalogError {
  try {
    action();
  } catch (error) {
    expect(error).to.be.instanceOf(CatalogError);
    return error as CatalogError;
  }
  expect.fail('expected a CatalogError');
}

const routeModels = (catalog: Catalog, model: string, tier: Tier): string[] =>
  catalog.modelsByName.get(model)!.routes[tier].map((route) => `${route.provider.name}/${route.model}`);

describe('model catalog', () => {
  describe('the example file, catalog.example.json (docs/architecture.md §16.6)', () => {
    it('loads, with every documented default applied', async () => {
      const catalog = await loadCatalog(EXAMPLE_PATH, { ANTHROPIC_API_KEY: 'sk-ant-test' });
      expect(catalog.currency).to.equal('CNY');
      expect(catalog.prices['thinking.output']).to.deep.equal({ units: 16n, scale: 0, text: '16' });
      expect(catalog.prices['no_thinking.input_cache_hit']).to.deep.equal({ units: 5n, scale: 1, text: '0.5' });

      const claude = catalog.providers.claude!;
      expect(claude).to.include({ type: 'anthropic', baseUrl: 'https://anthropic.example', apiKey: 'sk-ant-test' });
      expect(claude.connectTimeoutMs).to.equal(30_000);
      expect(claude.idleTimeoutMs).to.equal(60_000);
      expect(catalog.providers.local!.apiKey).to.equal(undefined);
      expect(catalog.warnings).to.deep.equal([
        'providers.local: environment variable LOCAL_LLM_KEY is not set; calls to this provider will be refused upstream',
      ]);

      const model = catalog.modelsByName.get('tsxt-general')!;
      expect(model).to.include({ displayName: 'General assistant', createdAt: DEFAULT_CREATED_AT, defaultMaxTokens: 4096 });
      const light = model.routes.light[0]!;
      expect(light.unify.input.text).to.equal('0.25');
      expect(light.unify.cachedInput.text, 'cached input defaults to the input factor').to.equal('0.25');
      expect(model.routes.standard[0]!.unify.output.text, 'unify defaults to 1').to.equal('1');
      expect(model.routes.thinking[0]!.thinking).to.equal(true);
      expect(routeModels(catalog, 'tsxt-general', 'standard')).to.deep.equal(['claude/claude-x', 'sim/sim-medium']);
      expect(catalog.assessment, 'the learned assessor\'s cut points').to.deep.equal(ROUTING_MODEL.thresholds);
      expect(catalog.guardrails).to.deep.equal({ policies: {}, blockList: [] });
    });

    it('prices cache writes on anthropic deployments at 1.25 and 2 × input unless stated, and as input elsewhere', () => {
      const catalog = example();
      catalog.models[0].routes.heavy[0].unify = { input: 3 };
      catalog.models[0].routes.thinking[0].unify = { input: 0.5, cache_write_1h: 1.5 };
      const model = parseCatalog(catalog, {}, 'catalog.json').modelsByName.get('tsxt-general')!;
      const claude = model.routes.standard[0]!.unify;
      expect([claude.cacheWrite5m?.text, claude.cacheWrite1h?.text]).to.deep.equal(['1.25', '2']);
      const stated = model.routes.thinking[0]!.unify;
      expect([stated.cacheWrite5m?.text, stated.cacheWrite1h?.text], 'relative to its input factor; a stated one wins').to.deep.equal(['0.625', '1.5']);
      const local = model.routes.heavy[0]!.unify;
      expect([local.cacheWrite5m?.text, local.cacheWrite1h?.text], 'an openai upstream bills no write apart').to.deep.equal(['3', '3']);
    });

    it('resolves input allowances: the defaults, then the provider\'s, then the deployment\'s own', () => {
      const catalog = example();
      catalog.providers.claude.input_allowances = { web_search: 50_000, image: 2_000 };
      catalog.models[0].routes.standard[0].input_allowances = { web_search: 20_000 };
      const model = parseCatalog(catalog, {}, 'catalog.json').modelsByName.get('tsxt-general')!;
      expect(model.routes.standard[0]!.inputAllowances).to.include({ web_search: 20_000, image: 2_000, document: 300_000 });
      expect(model.routes.thinking[0]!.inputAllowances, 'the same provider, no own numbers').to.include({ web_search: 50_000, image: 2_000 });
      expect(model.routes.heavy[0]!.inputAllowances).to.include({ web_search: 200_000, image: 4_000 });
    });

    it('computes the minimal useful call once: 256 prompt and 1,024 output tokens at the costliest deployment and price class', () => {
      // claude-x (unify 1) at thinking prices: 256 × 4 + (1 × 1 + 1 × 4 + 2 slack) + 1,024 tokens sent with a forced
      // thinking budget of 1,024 (2,048) × 16; sim-small at 0.25 and the other deployments cost less.
      expect(parseCatalog(example(), {}, 'catalog.json').minimalCallMicros).to.equal(256 * 4 + 7 + 2_048 * 16);
    });

    it('is the same document as the in-test copy', async () => {
      const fromFile = await loadCatalog(EXAMPLE_PATH, {});
      const fromObject = parseCatalog(example(), {}, 'inline');
      expect(fromFile.models).to.deep.equal(fromObject.models);
    });
  });

  describe('built-in catalog', () => {
    it('serves mock models offline when no upstream key is set', () => {
      const catalog = builtinCatalog({});
      expect(Object.keys(catalog.providers)).to.deep.equal(['sim']);
      expect(catalog.providers.sim!.mock).to.include({ latencyMs: 20, chunkDelayMs: 5 });
      expect(catalog.models.map((model) => model.name)).to.include.members(['tsxt-general', 'tsxt-fast', 'tsxt-code']);
      expect(routeModels(catalog, 'tsxt-general', 'light')).to.deep.equal(['sim/sim-small']);
      expect(routeModels(catalog, 'tsxt-general', 'standard')).to.deep.equal(['sim/sim-medium']);
      expect(routeModels(catalog, 'tsxt-general', 'heavy')).to.deep.equal(['sim/sim-large']);
      expect(catalog.modelsByName.get('tsxt-general')!.routes.thinking[0]!.thinking).to.equal(true);
      expect(catalog.modelsByName.get('tsxt-general')!.routes.light[0]!.unify.output.text).to.equal('0.25');
      expect(catalog.modelsByName.get('tsxt-general')!.routes.heavy[0]!.unify.input.text).to.equal('2');
      expect(catalog.prices['no_thinking.output'].text).to.equal('8');
      expect(catalog.warnings).to.deep.equal([]);
    });

    it('fills the tiers tsxt-fast and tsxt-code leave empty', () => {
      const catalog = builtinCatalog({});
      expect(routeModels(catalog, 'tsxt-fast', 'heavy')).to.deep.equal(['sim/sim-medium']);
      expect(routeModels(catalog, 'tsxt-fast', 'thinking')).to.deep.equal(['sim/sim-medium']);
      expect(routeModels(catalog, 'tsxt-code', 'light')).to.deep.equal(['sim/sim-medium']);
    });

    it('puts real upstreams first, with the mock behind them, when their keys are set', () => {
      const catalog = builtinCatalog({ ANTHROPIC_API_KEY: 'sk-ant', OPENAI_API_KEY: 'sk-oai', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
      expect(catalog.providers.anthropic).to.include({ type: 'anthropic', baseUrl: 'https://api.anthropic.com', apiKey: 'sk-ant' });
      expect(catalog.providers.openai).to.include({ type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-oai' });
      for (const tier of ['standard', 'heavy', 'thinking'] as const) {
        const providers = catalog.modelsByName.get('tsxt-general')!.routes[tier].map((route) => route.provider.name);
        expect(providers, tier).to.deep.equal(['anthropic', 'openai', 'sim']);
      }
      expect(catalog.modelsByName.get('tsxt-general')!.routes.thinking.every((route) => route.thinking)).to.equal(true);
      expect(routeModels(catalog, 'tsxt-general', 'light')).to.deep.equal(['sim/sim-small']);
    });

    it('lets Responses-form calls pass through to OpenAI itself, not to a compatible server at OPENAI_BASE_URL', () => {
      expect(builtinCatalog({ OPENAI_API_KEY: 'sk-oai' }).providers.openai).to.include({ baseUrl: 'https://api.openai.com/v1', responses: true });
      expect(builtinCatalog({ OPENAI_API_KEY: 'sk-oai', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }).providers.openai!.responses).to.equal(undefined);
    });

    it('honours ANTHROPIC_BASE_URL', () => {
      const catalog = builtinCatalog({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010/' });
      expect(catalog.providers.anthropic!.baseUrl).to.equal('http://127.0.0.1:4010');
      expect(catalog.providers.openai).to.equal(undefined);
    });

    it('is what loadCatalog returns without a path', async () => {
      expect((await loadCatalog(undefined, {})).models).to.deep.equal(builtinCatalog({}).models);
    });
  });

  describe('invalid catalogs name the exact path', () => {
    const cases: Array<[string, (catalog: Record<string, any>) => void, string]> = [
      [
        'unknown provider',
        (c) => (c.models[0].routes.standard[1].provider = 'claud'),
        'models[0].routes.standard[1].provider: unknown provider "claud" (known: sim, claude, local)',
      ],
      ['price not a decimal', (c) => (c.prices['thinking.output'] = '16 yuan'), 'prices["thinking.output"]: must be a decimal string like "16" or "0.5"'],
      ['price as a JSON number', (c) => (c.prices['no_thinking.output'] = 8), 'prices["no_thinking.output"]: must be a decimal string like "16" or "0.5"'],
      ['negative price', (c) => (c.prices['thinking.output'] = '-1'), 'prices["thinking.output"]: must not be negative'],
      ['price with 7 decimal places', (c) => (c.prices['thinking.output'] = '0.0000001'), 'prices["thinking.output"]: must have at most 6 decimal places'],
      ['missing price tier', (c) => delete c.prices['thinking.input_cache_hit'], 'prices["thinking.input_cache_hit"]: is required'],
      ['missing prices', (c) => delete c.prices, 'prices: is required'],
      [
        'duplicate model name',
        (c) => c.models.push({ ...c.models[0] }),
        'models[1].name: duplicate model name "tsxt-general" (also models[0])',
      ],
      ['bad model name', (c) => (c.models[0].name = 'tsxt general'), 'models[0].name: may only contain'],
      ['base_url not a URL', (c) => (c.providers.local.base_url = 'localhost:8000'), 'providers.local.base_url: must be an http(s) URL'],
      ['base_url not http', (c) => (c.providers.local.base_url = 'ftp://x.example/v1'), 'providers.local.base_url: must be an http(s) URL'],
      ['base_url missing', (c) => delete c.providers.claude.base_url, 'providers.claude.base_url: is required for type "anthropic"'],
      [
        'anthropic base_url with /v1',
        (c) => (c.providers.claude.base_url = 'https://anthropic.example/v1'),
        'providers.claude.base_url: must not end in /v1 for type "anthropic"',
      ],
      ['negative unify', (c) => (c.models[0].routes.light[0].unify.input = -0.5), 'models[0].routes.light[0].unify.input: must be greater than 0'],
      ['zero unify', (c) => (c.models[0].routes.light[0].unify.output = '0'), 'models[0].routes.light[0].unify.output: must be greater than 0'],
      ['unknown unify kind', (c) => (c.models[0].routes.light[0].unify.ouput = 1), 'models[0].routes.light[0].unify.ouput: unknown key (did you mean "output"?)'],
      ['unknown top-level key', (c) => (c.modles = []), 'modles: unknown key (did you mean "models"?)'],
      ['unknown tier', (c) => (c.models[0].routes.medium = []), 'models[0].routes.medium: unknown key'],
      ['unknown provider type', (c) => (c.providers.sim.type = 'mok'), 'providers.sim.type: must be one of anthropic, openai, mock, got "mok"'],
      ['responses on a non-openai provider', (c) => (c.providers.claude.responses = true), 'providers.claude.responses: is only valid for providers of type "openai"'],
      ['responses not a boolean', (c) => (c.providers.local.responses = 'yes'), 'providers.local.responses: must be true or false'],
      ['model with no routes', (c) => (c.models[0].routes = { light: [], heavy: [] }), 'models[0].routes: has no deployments in any tier'],
      ['deployment without model', (c) => delete c.models[0].routes.heavy[0].model, 'models[0].routes.heavy[0].model: is required'],
      ['bad currency', (c) => (c.currency = 'yuan'), 'currency: must be a 3-letter upper-case currency code'],
      ['assessment out of range', (c) => (c.assessment = { heavy: 1.5 }), 'assessment.heavy: must be a number between 0 and 1'],
      ['guardrail policy typo', (c) => (c.guardrails = { policies: { pii: 'redcat' } }), 'guardrails.policies.pii: must be one of block, redact, flag, off'],
      [
        'guardrail rule typo',
        (c) => (c.guardrails = { policies: { 'e-mail': 'off' } }),
        'guardrails.policies["e-mail"]: unknown guardrail rule or category (did you mean "email"?)',
      ],
      ['breaker threshold 0', (c) => (c.breaker = { threshold: 0 }), 'breaker.threshold: must be a whole number from 1 to 1000, got 0'],
      ['breaker key typo', (c) => (c.breaker = { cooldownms: 100 }), 'breaker.cooldownms: unknown key (did you mean "cooldown_ms"?)'],
      ['provider breaker cooldown', (c) => (c.providers.claude.breaker = { cooldown_ms: 'soon' }), 'providers.claude.breaker.cooldown_ms: must be a whole number'],
      ['mock settings on a real provider', (c) => (c.providers.claude.mock = { latency_ms: 1 }), 'providers.claude.mock: is only valid for providers of type "mock"'],
      ['mock fail_rate above 1', (c) => (c.providers.sim.mock = { fail_rate: 2 }), 'providers.sim.mock.fail_rate: must be a number from 0 to 1'],
      ['bad created_at', (c) => (c.models[0].created_at = 'yesterday'), 'models[0].created_at: must be an ISO 8601 date'],
      [
        'input allowance kind typo',
        (c) => (c.models[0].routes.standard[0].input_allowances = { web_serch: 20_000 }),
        'models[0].routes.standard[0].input_allowances.web_serch: unknown key (did you mean "web_search"?)',
      ],
      [
        'negative input allowance',
        (c) => (c.providers.claude.input_allowances = { document: -1 }),
        'providers.claude.input_allowances.document: must be a whole number from 0 to 100000000, got -1',
      ],
      ['input allowances not an object', (c) => (c.models[0].routes.heavy[0].input_allowances = 5), 'models[0].routes.heavy[0].input_allowances: must be an object'],
      ['zero cache-write factor', (c) => (c.models[0].routes.standard[0].unify = { cache_write_1h: 0 }), 'models[0].routes.standard[0].unify.cache_write_1h: must be greater than 0'],
    ];
    for (const [title, mutate, expected] of cases) {
      it(title, () => {
        const catalog = example();
        mutate(catalog);
        const error = errorOf(() => parseCatalog(catalog, {}, 'catalog.json'));
        expect(error.message).to.include(`catalog.json: ${expected}`);
      });
    }

    it('reports every problem at once, one line each', () => {
      const catalog = example();
      catalog.prices['thinking.output'] = 'x';
      catalog.models[0].routes.standard[1].provider = 'claud';
      catalog.colour = 'blue';
      const error = errorOf(() => parseCatalog(catalog, {}, 'catalog.json'));
      const lines = error.message.split('\n');
      expect(lines).to.have.length(3);
      expect(lines.every((line) => line.startsWith('catalog.json: '))).to.equal(true);
      expect(error.issues.map((issue) => issue.path)).to.have.members([
        'colour',
        'prices["thinking.output"]',
        'models[0].routes.standard[1].provider',
      ]);
    });

    it('accepts x- and _comment keys as notes', () => {
      const catalog = example();
      catalog['x-owner'] = 'platform team';
      catalog._comment = 'prices reviewed 2026-01';
      catalog.providers.sim._comment = 'offline';
      expect(() => parseCatalog(catalog, {}, 'catalog.json')).not.to.throw();
    });

    it('refuses a document that is not an object', () => {
      expect(errorOf(() => parseCatalog([], {}, 'catalog.json')).message).to.equal('catalog.json: must be an object');
    });
  });

  describe('optional fields', () => {
    it('reads timeouts, mock behaviour, assessment and guardrails', () => {
      const catalog = example();
      catalog.providers.local.timeout_ms = 5000;
      catalog.providers.local.idle_timeout_ms = 7000;
      catalog.providers.sim.mock = { latency_ms: 0, chunk_delay_ms: 1, chunk_chars: 4, fail_rate: 0.5, fail_status: 529, reset_after_chunks: 3 };
      catalog.assessment = { standard: 0.3, heavy: 0.7 };
      catalog.guardrails = { policies: { pii: 'block', 'prompt-injection': 'off' }, block_list: ['机密'] };
      catalog.models[0].created_at = '2026-03-01';
      catalog.models[0].default_max_tokens = 1024;
      const parsed = parseCatalog(catalog, { LOCAL_LLM_KEY: 'k' }, 'catalog.json');
      expect(parsed.providers.local).to.include({ connectTimeoutMs: 5000, idleTimeoutMs: 7000, apiKey: 'k' });
      expect(parsed.providers.sim!.mock).to.deep.equal({
        latencyMs: 0,
        chunkDelayMs: 1,
        chunkChars: 4,
        failRate: 0.5,
        failStatus: 529,
        resetAfterChunks: 3,
      });
      expect(parsed.assessment).to.deep.equal({ standard: 0.3, heavy: 0.7 });
      expect(parsed.guardrails).to.deep.equal({ policies: { pii: 'block', 'prompt-injection': 'off' }, blockList: ['机密'] });
      expect(parsed.models[0]).to.include({ createdAt: '2026-03-01T00:00:00Z', defaultMaxTokens: 1024 });
    });

    it('reads `responses: true` on an openai provider (Responses-form calls pass through to it)', () => {
      const catalog = example();
      catalog.providers.local.responses = true;
      const parsed = parseCatalog(catalog, { LOCAL_LLM_KEY: 'k' }, 'catalog.json');
      expect(parsed.providers.local!.responses).to.equal(true);
      expect(parseCatalog(example(), { LOCAL_LLM_KEY: 'k' }, 'catalog.json').providers.local!.responses).to.equal(undefined);
    });

    it('reads breaker settings for the catalog and per provider, each field over the level above', () => {
      const catalog = example();
      expect(parseCatalog(catalog, {}, 'catalog.json').breaker).to.deep.equal({ threshold: 3, cooldownMs: 30_000 });
      catalog.breaker = { threshold: 5, cooldown_ms: 2000 };
      catalog.providers.claude.breaker = { cooldown_ms: 100 };
      const parsed = parseCatalog(catalog, {}, 'catalog.json');
      expect(parsed.breaker).to.deep.equal({ threshold: 5, cooldownMs: 2000 });
      expect(parsed.providers.claude!.breaker).to.deep.equal({ threshold: 5, cooldownMs: 100 });
      expect(parsed.providers.sim!.breaker).to.equal(undefined);
    });

    it('defaults the currency to CNY and the display name to the model name', () => {
      const catalog = example();
      delete catalog.currency;
      delete catalog.models[0].display_name;
      const parsed = parseCatalog(catalog, {}, 'catalog.json');
      expect(parsed.currency).to.equal('CNY');
      expect(parsed.models[0]!.displayName).to.equal('tsxt-general');
    });
  });

  describe('model aliases', () => {
    const withModels = (models: Array<Record<string, unknown>>) => {
      const json = example();
      const routes = json.models[0].routes;
      json.models = models.map((model) => ({ routes, ...model }));
      return json;
    };

    it('resolves a neutral name, an exact alias, then the most specific glob, earlier models winning ties', () => {
      const catalog = parseCatalog(
        withModels([
          { name: 'general', aliases: ['claude-*', 'gpt-4o', 'gpt-*'] },
          { name: 'fast', aliases: ['claude-*haiku*', 'gpt-*mini*'] },
          { name: 'other', aliases: ['gpt-*'] },
        ]),
        {},
        'aliases.json',
      );
      const resolved = (name: string) => catalog.resolveModel(name)?.name;
      expect(resolved('general')).to.equal('general');
      expect(resolved('fast')).to.equal('fast');
      expect(resolved('gpt-4o')).to.equal('general');
      expect(resolved('claude-opus-5-5')).to.equal('general');
      expect(resolved('claude-haiku-4-5-20251001')).to.equal('fast');
      expect(resolved('gpt-4o-mini')).to.equal('fast');
      expect(resolved('gpt-5')).to.equal('general');
      expect(resolved('llama-3')).to.equal(undefined);
      // A glob matches the whole name; its other characters are literal.
      expect(resolved('xclaude-opus')).to.equal(undefined);
      expect(parseCatalog(withModels([{ name: 'a', aliases: ['v1.5*'] }]), {}, 'x').resolveModel('v105')).to.equal(undefined);
      expect(catalog.modelsByName.has('claude-opus-5-5'), 'aliases are no model names').to.equal(false);
    });

    it('refuses aliases that are model names, exact aliases of two models, match-everything globs and white space, naming the path', () => {
      const cases: Array<[Array<Record<string, unknown>>, string]> = [
        [[{ name: 'a', aliases: ['b'] }, { name: 'b' }], 'models[0].aliases[0]: is the name of another model ("b")'],
        [[{ name: 'a', aliases: ['a'] }], 'models[0].aliases[0]: is the model’s own name'],
        [[{ name: 'a', aliases: ['gpt-4o'] }, { name: 'b', aliases: ['gpt-4o'] }], 'models[1].aliases[0]: is already an alias of models[0]'],
        [[{ name: 'a', aliases: ['**'] }], 'models[0].aliases[0]: matches every name'],
        [[{ name: 'a', aliases: ['gpt 4'] }], 'models[0].aliases[0]: must be a model name or a glob'],
        [[{ name: 'a', aliases: 'gpt-*' }], 'models[0].aliases: must be an array'],
      ];
      for (const [models, message] of cases) {
        expect(errorOf(() => parseCatalog(withModels(models), {}, 'aliases.json')).message).to.contain(message);
      }
    });

    it('gives the built-in catalog the vendor names clients send by default', () => {
      const catalog = builtinCatalog({});
      expect(catalog.resolveModel('claude-opus-5-5')?.name).to.equal('tsxt-general');
      expect(catalog.resolveModel('claude-sonnet-4-6')?.name).to.equal('tsxt-general');
      expect(catalog.resolveModel('claude-haiku-4-5-20251001')?.name).to.equal('tsxt-fast');
      expect(catalog.resolveModel('gpt-4o')?.name).to.equal('tsxt-general');
      expect(catalog.resolveModel('gpt-4o-mini')?.name).to.equal('tsxt-fast');
      expect(catalog.resolveModel('tsxt-code')?.name).to.equal('tsxt-code');
    });
  });

  describe('tier fallback', () => {
    it('borrows from the nearest tier, the higher one on a tie', () => {
      expect(fallbackOrder('light')).to.deep.equal(['standard', 'heavy', 'thinking']);
      expect(fallbackOrder('standard')).to.deep.equal(['heavy', 'light', 'thinking']);
      expect(fallbackOrder('heavy')).to.deep.equal(['thinking', 'standard', 'light']);
      expect(fallbackOrder('thinking')).to.deep.equal(['heavy', 'standard', 'light']);
    });

    const cases: Array<[Partial<Record<Tier, string[]>>, Record<Tier, string[]>]> = [
      [{ standard: ['s'] }, { light: ['s'], standard: ['s'], heavy: ['s'], thinking: ['s'] }],
      [{ light: ['l'], thinking: ['t'] }, { light: ['l'], standard: ['l'], heavy: ['t'], thinking: ['t'] }],
      [{ light: ['l'], heavy: ['h'] }, { light: ['l'], standard: ['h'], heavy: ['h'], thinking: ['h'] }],
      [{ light: ['l'], standard: [], thinking: ['t'] }, { light: ['l'], standard: ['l'], heavy: ['t'], thinking: ['t'] }],
      [{ thinking: ['t'] }, { light: ['t'], standard: ['t'], heavy: ['t'], thinking: ['t'] }],
    ];
    for (const [declared, resolved] of cases) {
      it(`resolves ${JSON.stringify(declared)}`, () => {
        expect(resolveTiers(declared)).to.deep.equal(resolved);
      });
    }

    it('has nothing to resolve when no tier has routes', () => {
      expect(resolveTiers({ light: [], heavy: [] })).to.equal(undefined);
    });

    it('is applied to every model of a catalog', () => {
      const catalog = example();
      catalog.models[0].routes = { heavy: [{ provider: 'local', model: 'qwen-large' }] };
      const parsed = parseCatalog(catalog, {}, 'catalog.json');
      for (const tier of TIERS) expect(routeModels(parsed, 'tsxt-general', tier)).to.deep.equal(['local/qwen-large']);
    });
  });

  describe('loadCatalog', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'catalog-test-'));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('names the path of a file it cannot read', async () => {
      const path = join(dir, 'missing.json');
      const error = await loadCatalog(path, {}).then(
        () => expect.fail('expected a CatalogError'),
        (caught: unknown) => caught,
      );
      expect(error).to.be.instanceOf(CatalogError);
      expect((error as Error).message).to.match(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot read the catalog file`));
    });

    const broken: Array<[string, string, string]> = [
      ['a missing value', '{\n  "currency": "CNY",\n  "prices": }\n', 'line 3, column 13'],
      ['a trailing comma', '{\n  "currency": "CNY",\n}', 'line 3, column 1'],
      ['an unquoted literal', '{\n  "a": tru\n}', 'line 2, column 8'],
      ['an unterminated object', '{ "a": 1', 'line 1, column 9'],
    ];
    for (const [title, text, where] of broken) {
      it(`names line and column of invalid JSON: ${title}`, async () => {
        const path = join(dir, 'broken.json');
        await writeFile(path, text);
        const error = await loadCatalog(path, {}).then(
          () => expect.fail('expected a CatalogError'),
          (caught: unknown) => caught as Error,
        );
        expect(error).to.be.instanceOf(CatalogError);
        expect(error.message).to.include(`${path}: invalid JSON at ${where}`);
      });
    }

    it('prefixes validation errors with the file path', async () => {
      const path = join(dir, 'bad-price.json');
      const catalog = example();
      catalog.prices[PRICE_TIERS[0]] = 'free';
      await writeFile(path, JSON.stringify(catalog, null, 2));
      const error = await loadCatalog(path, {}).then(
        () => expect.fail('expected a CatalogError'),
        (caught: unknown) => caught as Error,
      );
      expect(error.message).to.equal(`${path}: prices["no_thinking.input_cache_hit"]: must be a decimal string like "16" or "0.5"`);
    });
  });
});
