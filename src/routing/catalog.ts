// Loads and validates the model catalog (docs/architecture.md §16.6). Operators write this
// file by hand and a typo can misroute or misbill traffic, so every field is
// checked, unknown keys are refused, and all problems are reported at once,
// each naming its path, before the gateway starts. The `providers` section is
// read in catalog-providers.ts.
import { readFile } from 'node:fs/promises';
import { BUILT_IN_RULES, DEFAULT_POLICY_BY_CATEGORY, isPolicyKey } from '../guardrails/guardrail-policy';
import { mulDecimal, parseDecimal } from '../core/decimal';
import { resolveAllowances } from '../core/input-allowances';
import { minimalCallMicros } from '../metering/worst-case';
import { builtinCatalogJson } from './builtin-catalog';
import { parseBreaker, parseInputAllowances, parseProviders, type ProviderTable } from './catalog-providers';
import { at, Reader, suggestion, type CatalogIssue, type Env, type Json } from './catalog-reader';
import { DEFAULT_BREAKER } from './circuit-breaker';
import { ROUTING_MODEL, routingModelProblem } from './routing-model';
import {
  PRICE_TIERS,
  TIERS,
  type AssessmentThresholds,
  type Catalog,
  type Decimal,
  type Deployment,
  type GuardrailPolicy,
  type ModelEntry,
  type PriceTier,
  type ProviderType,
  type Tier,
  type UnifyFactors,
} from '../core/catalog.types';
import { jsonErrorOffset, lineAndColumn } from './json-position';

// CatalogError's issue type stays importable from here, where CatalogError is.
export type { CatalogIssue } from './catalog-reader';

/** Every problem of one catalog, one line each: `<source>: <path>: <message>`. */
export class CatalogError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly CatalogIssue[],
    options?: { cause?: unknown },
  ) {
    super(issues.map((issue) => `${source}: ${issue.path === '' ? '' : `${issue.path}: `}${issue.message}`).join('\n'), options);
    this.name = 'CatalogError';
  }
}

const DEFAULT_CURRENCY = 'CNY';
export const DEFAULT_CREATED_AT = '2026-01-01T00:00:00Z';
export const DEFAULT_MAX_TOKENS = 4096;
/** The learned assessor's cut points (routing-model.json), used when the catalog has no `assessment`. */
export const DEFAULT_ASSESSMENT: Readonly<AssessmentThresholds> = ROUTING_MODEL.thresholds;

const POLICIES: readonly GuardrailPolicy[] = ['block', 'redact', 'flag', 'off'];
const MODEL_NAME = /^[a-zA-Z0-9._:-]+$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

function parsePrices(r: Reader, value: unknown): Record<PriceTier, Decimal> | undefined {
  if (value === undefined) return r.fail('prices', `is required (all six tiers: ${PRICE_TIERS.join(', ')})`);
  const json = r.object(value, 'prices', PRICE_TIERS);
  if (json === undefined) return undefined;
  const prices: Partial<Record<PriceTier, Decimal>> = {};
  for (const tier of PRICE_TIERS) {
    const path = at('prices', tier);
    const raw = json[tier];
    // Strings only: a price is money, and JSON numbers are floats to most tools.
    if (raw === undefined) r.fail(path, 'is required: every one of the six price tiers needs a price');
    else if (typeof raw !== 'string' || !/^\s*-?\d+(\.\d+)?\s*$/.test(raw)) r.fail(path, 'must be a decimal string like "16" or "0.5"');
    else prices[tier] = r.decimal(raw, path, (d) => (d.units < 0n ? 'must not be negative' : ''));
  }
  return PRICE_TIERS.every((tier) => prices[tier] !== undefined) ? (prices as Record<PriceTier, Decimal>) : undefined;
}

/**
 * What Anthropic charges for a prompt-cache write, relative to plain input:
 * 1.25× for the 5-minute TTL (the default), 2× for the 1-hour one.
 */
const ANTHROPIC_CACHE_WRITE = { '5m': parseDecimal('1.25'), '1h': parseDecimal('2') };

function parseUnify(r: Reader, value: unknown, path: string, providerType: ProviderType | undefined): UnifyFactors {
  const one = parseDecimal('1');
  const json = value === undefined ? {} : r.object(value, path, ['input', 'cached_input', 'output', 'cache_write_5m', 'cache_write_1h']);
  const factor = (key: string): Decimal | undefined =>
    json?.[key] === undefined ? undefined : r.decimal(json[key], at(path, key), (d) => (d.units > 0n ? '' : `must be greater than 0, got ${d.text}`));
  const input = factor('input') ?? one;
  // A cache write unifies at what the provider charges for it: on Anthropic above the input price; elsewhere writes are not billed apart.
  const write = (key: string, ttl: keyof typeof ANTHROPIC_CACHE_WRITE): Decimal =>
    factor(key) ?? (providerType === 'anthropic' ? mulDecimal(input, ANTHROPIC_CACHE_WRITE[ttl]) : input);
  return {
    input,
    // Cached input is usually discounted by the upstream already; by default it unifies like fresh input.
    cachedInput: factor('cached_input') ?? input,
    output: factor('output') ?? one,
    cacheWrite5m: write('cache_write_5m', '5m'),
    cacheWrite1h: write('cache_write_1h', '1h'),
  };
}

function parseDeployment(r: Reader, value: unknown, path: string, providers: ProviderTable): Deployment | undefined {
  const json = r.object(value, path, ['provider', 'model', 'thinking', 'unify', 'input_allowances']);
  if (json === undefined) return undefined;
  const providerName = r.required(r.string(json, 'provider', path), json, 'provider', path);
  if (providerName !== undefined && !providers.names.includes(providerName)) {
    r.fail(at(path, 'provider'), `unknown provider ${JSON.stringify(providerName)} (known: ${providers.names.join(', ') || 'none'})`);
  }
  const model = r.required(r.string(json, 'model', path), json, 'model', path);
  if (json.thinking !== undefined && typeof json.thinking !== 'boolean') r.fail(at(path, 'thinking'), 'must be true or false');
  const provider = providerName === undefined ? undefined : providers.byName.get(providerName);
  const unify = parseUnify(r, json.unify, at(path, 'unify'), provider?.type);
  const own = parseInputAllowances(r, json.input_allowances, at(path, 'input_allowances'));
  if (provider === undefined || model === undefined) return undefined;
  return { provider, model, thinking: json.thinking === true, unify, inputAllowances: resolveAllowances(provider.inputAllowances, own) };
}

/**
 * The tiers a tier borrows routes from, nearest first in the order
 * light < standard < heavy < thinking; on a tie the higher tier wins, since
 * under-serving a request is worse than over-serving it.
 */
export function fallbackOrder(tier: Tier): Tier[] {
  const position = TIERS.indexOf(tier);
  const distance = (other: Tier): number => Math.abs(TIERS.indexOf(other) - position);
  return TIERS.filter((other) => other !== tier).sort((a, b) => distance(a) - distance(b) || TIERS.indexOf(b) - TIERS.indexOf(a));
}

/** Fills every empty tier from the nearest tier that has routes; undefined when no tier has any. */
export function resolveTiers<T>(declared: Partial<Record<Tier, readonly T[]>>): Record<Tier, T[]> | undefined {
  const has = (tier: Tier): boolean => (declared[tier]?.length ?? 0) > 0;
  if (!TIERS.some(has)) return undefined;
  const resolved = {} as Record<Tier, T[]>;
  for (const tier of TIERS) {
    const source = has(tier) ? tier : fallbackOrder(tier).find(has)!;
    resolved[tier] = [...declared[source]!];
  }
  return resolved;
}

function parseCreatedAt(r: Reader, json: Json, path: string): string {
  const raw = r.string(json, 'created_at', path, ISO_DATE, 'must be an ISO 8601 date such as "2026-01-01T00:00:00Z"');
  if (raw === undefined) return DEFAULT_CREATED_AT;
  const time = Date.parse(raw);
  if (Number.isNaN(time)) return r.fail(at(path, 'created_at'), `is not a real date, got ${JSON.stringify(raw)}`) ?? DEFAULT_CREATED_AT;
  return new Date(time).toISOString().replace('.000Z', 'Z');
}

/** An alias: an exact name or a glob with `*`; no white space, at most 200 chars. */
const ALIAS = /^[^\s]{1,200}$/;

function parseAliases(r: Reader, json: Json, path: string): string[] {
  if (json.aliases === undefined) return [];
  const list = r.array(json.aliases, at(path, 'aliases')) ?? [];
  const aliases: string[] = [];
  list.forEach((alias, index) => {
    if (typeof alias !== 'string' || !ALIAS.test(alias)) r.fail(at(at(path, 'aliases'), index), 'must be a model name or a glob with "*", without white space, at most 200 chars');
    else if (!alias.replaceAll('*', '')) r.fail(at(at(path, 'aliases'), index), `matches every name; name at least one character besides "*"`);
    else aliases.push(alias);
  });
  return aliases;
}

function parseModel(r: Reader, value: unknown, path: string, providers: ProviderTable): ModelEntry | undefined {
  const json = r.object(value, path, ['name', 'display_name', 'created_at', 'default_max_tokens', 'routes', 'aliases']);
  if (json === undefined) return undefined;
  const name = r.required(r.string(json, 'name', path, MODEL_NAME, 'may only contain letters, digits, ".", "_", ":" and "-"'), json, 'name', path);
  const displayName = r.string(json, 'display_name', path) ?? name;
  const createdAt = parseCreatedAt(r, json, path);
  const defaultMaxTokens = r.integer(json, 'default_max_tokens', path, 1, 10_000_000) ?? DEFAULT_MAX_TOKENS;
  const routesPath = at(path, 'routes');
  const routesJson = json.routes === undefined ? r.fail(routesPath, 'is required') : r.object(json.routes, routesPath, TIERS);
  if (routesJson === undefined) return undefined;
  const declared: Partial<Record<Tier, Deployment[]>> = {};
  let anyDeclared = false;
  for (const tier of TIERS) {
    if (routesJson[tier] === undefined) continue;
    const list = r.array(routesJson[tier], at(routesPath, tier));
    if (list === undefined) continue;
    anyDeclared ||= list.length > 0;
    declared[tier] = list.flatMap((entry, index) => parseDeployment(r, entry, at(at(routesPath, tier), index), providers) ?? []);
  }
  if (!anyDeclared) return r.fail(routesPath, `has no deployments in any tier (${TIERS.join(', ')}); a model needs at least one`);
  const aliases = parseAliases(r, json, path);
  const routes = resolveTiers(declared);
  if (routes === undefined || name === undefined) return undefined;
  return { name, displayName: displayName ?? name, createdAt, defaultMaxTokens, routes, aliases };
}

function parseModels(r: Reader, value: unknown, providers: ProviderTable): ModelEntry[] {
  if (value === undefined) return r.fail('models', 'is required') ?? [];
  const list = r.array(value, 'models');
  if (list === undefined) return [];
  if (list.length === 0) r.fail('models', 'must list at least one model');
  const firstIndex = new Map<string, number>();
  const models: ModelEntry[] = [];
  list.forEach((entry, index) => {
    const model = parseModel(r, entry, at('models', index), providers);
    const name = typeof entry === 'object' && entry !== null ? (entry as Json).name : undefined;
    if (typeof name === 'string') {
      const first = firstIndex.get(name);
      if (first !== undefined) r.fail(at(at('models', index), 'name'), `duplicate model name ${JSON.stringify(name)} (also models[${first}])`);
      else firstIndex.set(name, index);
    }
    if (model !== undefined) models.push(model);
  });
  return models;
}

interface Glob {
  pattern: RegExp;
  /** Characters besides `*`: the more, the more specific. */
  literal: number;
  model: ModelEntry;
}

/**
 * Name → model resolution, built once at load: neutral names and exact
 * aliases are one Map lookup; globs are compiled once and tried most
 * specific first. An alias may not be a neutral name, and an exact alias may
 * belong to one model only.
 */
function modelResolver(r: Reader, models: readonly ModelEntry[]): (name: string) => ModelEntry | undefined {
  const exact = new Map(models.map((model) => [model.name, model]));
  const owner = new Map<string, number>();
  const globs: Glob[] = [];
  models.forEach((model, index) => {
    model.aliases.forEach((alias, aliasIndex) => {
      const path = at(at(at('models', index), 'aliases'), aliasIndex);
      if (exact.has(alias) && exact.get(alias) !== model) return r.fail(path, `is the name of another model (${JSON.stringify(alias)})`);
      if (exact.has(alias)) return r.fail(path, 'is the model’s own name');
      if (alias.includes('*')) {
        const source = alias.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
        globs.push({ pattern: new RegExp(`^${source}$`), literal: alias.replaceAll('*', '').length, model });
        return undefined;
      }
      const first = owner.get(alias);
      if (first !== undefined && first !== index) return r.fail(path, `is already an alias of models[${first}]`);
      owner.set(alias, index);
      return undefined;
    });
  });
  const aliases = new Map([...owner].map(([alias, index]) => [alias, models[index]!]));
  // Stable: models listed earlier win a tie of specificity.
  globs.sort((a, b) => b.literal - a.literal);
  return (name) => exact.get(name) ?? aliases.get(name) ?? globs.find((glob) => glob.pattern.test(name))?.model;
}

function parseAssessment(r: Reader, value: unknown): AssessmentThresholds {
  const json = value === undefined ? {} : r.object(value, 'assessment', ['standard', 'heavy']);
  const threshold = (key: 'standard' | 'heavy'): number => {
    const raw = json?.[key];
    if (raw === undefined) return DEFAULT_ASSESSMENT[key];
    if (typeof raw === 'number' && raw > 0 && raw < 1) return raw;
    return r.fail(at('assessment', key), `must be a number between 0 and 1 (exclusive), got ${JSON.stringify(raw)}`) ?? DEFAULT_ASSESSMENT[key];
  };
  // The learned assessor these cut points split (src/routing/routing-model.json) must match the code that measures requests.
  if (routingModelProblem !== undefined) r.fail('assessment', routingModelProblem);
  const thresholds = { standard: threshold('standard'), heavy: threshold('heavy') };
  if (thresholds.standard >= thresholds.heavy) r.fail('assessment', `standard (${thresholds.standard}) must be below heavy (${thresholds.heavy})`);
  return thresholds;
}

function parseGuardrails(r: Reader, value: unknown): Catalog['guardrails'] {
  const guardrails: Catalog['guardrails'] = { policies: {}, blockList: [] };
  const json = value === undefined ? undefined : r.object(value, 'guardrails', ['policies', 'block_list']);
  if (json === undefined) return guardrails;
  const policies = json.policies === undefined ? undefined : r.object(json.policies, 'guardrails.policies');
  for (const [rule, policy] of Object.entries(policies ?? {})) {
    if (!isPolicyKey(rule)) {
      const known = [...BUILT_IN_RULES.keys(), ...Object.keys(DEFAULT_POLICY_BY_CATEGORY)];
      r.fail(at('guardrails.policies', rule), `unknown guardrail rule or category${suggestion(rule, known)}; known: ${known.join(', ')}`);
    } else if (POLICIES.includes(policy as GuardrailPolicy)) guardrails.policies[rule] = policy as GuardrailPolicy;
    else r.fail(at('guardrails.policies', rule), `must be one of ${POLICIES.join(', ')}, got ${JSON.stringify(policy)}`);
  }
  const blockList = json.block_list === undefined ? [] : (r.array(json.block_list, 'guardrails.block_list') ?? []);
  blockList.forEach((entry, index) => {
    if (typeof entry === 'string' && entry.trim() !== '') guardrails.blockList.push(entry);
    else r.fail(at('guardrails.block_list', index), 'must be a non-empty string');
  });
  return guardrails;
}

const TOP_LEVEL = ['currency', 'prices', 'providers', 'models', 'assessment', 'guardrails', 'breaker'];

/** Validates a parsed catalog file; `source` (a path) prefixes every error line. */
export function parseCatalog(json: unknown, env: Env, source: string): Catalog {
  const r = new Reader();
  const root = r.object(json, '', TOP_LEVEL);
  if (root === undefined) throw new CatalogError(source, r.issues);
  const currency = r.string(root, 'currency', '', /^[A-Z]{3}$/, 'must be a 3-letter upper-case currency code such as "CNY"');
  const prices = parsePrices(r, root.prices);
  const warnings: string[] = [];
  const breaker = root.breaker === undefined ? { ...DEFAULT_BREAKER } : parseBreaker(r, root.breaker, 'breaker', DEFAULT_BREAKER);
  const providers = parseProviders(r, root.providers, env, warnings, breaker);
  const models = parseModels(r, root.models, providers);
  const assessment = parseAssessment(r, root.assessment);
  const guardrails = parseGuardrails(r, root.guardrails);
  const resolveModel = modelResolver(r, models);
  if (r.issues.length > 0 || prices === undefined) throw new CatalogError(source, r.issues);
  return {
    minimalCallMicros: minimalCallMicros({ models, prices }),
    currency: currency ?? DEFAULT_CURRENCY,
    prices,
    providers: Object.fromEntries(providers.byName),
    models,
    modelsByName: new Map(models.map((model) => [model.name, model])),
    resolveModel,
    assessment,
    breaker,
    guardrails,
    warnings,
  };
}

/** The catalog `npm start` uses without GATEWAY_CATALOG: mock models, plus real upstreams whose keys are set. */
export function builtinCatalog(env: Env): Catalog {
  return parseCatalog(builtinCatalogJson(env), env, 'built-in catalog');
}

/** Reads and validates a catalog file, or returns the built-in catalog when no path is configured. */
export async function loadCatalog(path: string | undefined, env: Env): Promise<Catalog> {
  if (path === undefined) return builtinCatalog(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CatalogError(path, [{ path: '', message: `cannot read the catalog file (${(error as Error).message})` }], { cause: error });
  }
  const body = text.replace(/^\uFEFF/, '');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    const where = lineAndColumn(body, jsonErrorOffset(body));
    throw new CatalogError(path, [{ path: '', message: `invalid JSON at ${where}: ${(error as Error).message}` }], { cause: error });
  }
  return parseCatalog(json, env, path);
}
