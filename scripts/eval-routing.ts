// `npm run eval:routing`: measures the complexity assessor on the labelled
// corpus (test/fixtures/routing/corpus.jsonl), per split (train, dev, test),
// per language and per tier: exact and within-one-tier agreement, thinking
// recall, the confusion matrix, agent turns, the share of traffic per tier,
// and what the routed tiers cost against sending everything to heavy at the
// built-in catalog's prices. `--verbose` lists every miss with its score and
// reasons; `--bench` times the assessment (p50/p95 µs); `--corpus file.jsonl`
// measures another corpus of the same form.
//
// The test split is reported, never tuned on: scripts/train-routing.ts reads
// only train and dev. The unit tests import `evaluate` to hold the targets.
import { fileURLToPath } from 'node:url';
import type { CanonicalRequest } from '../src/core/canonical';
import { BUILTIN_PRICES, builtinCatalogJson } from '../src/routing/builtin-catalog';
import { TIERS, type AssessmentThresholds, type Tier } from '../src/core/catalog.types';
import { DEFAULT_ASSESSMENT_THRESHOLDS, assessComplexity, type Assessment } from '../src/routing/complexity';
import { ROUTING_MODEL, type RoutingModel } from '../src/routing/routing-model';
import { estimateTokens } from '../src/routing/token-estimate';
import { HARNESSES, loadCorpus, toRequest, type CorpusItem, type Harness, type Lang, type Split } from './routing-corpus';

export interface Evaluation {
  count: number;
  exact: number;
  withinOne: number;
  /** Share of thinking-labelled items routed to thinking. */
  thinkingRecall: number;
  lightToThinking: number;
  /** Agent turns labelled light or standard that went to heavy or thinking. */
  agentOverRouted: number;
  /** Agent turns: all, and per harness (`synthetic`: the corpus's own Claude Code scaffold). */
  agent: Record<AgentKind | 'all', AgentFigures>;
  byLang: Record<Lang, { exact: number; count: number }>;
  byTier: Record<Tier, { exact: number; count: number }>;
  /** matrix[label][routed] */
  matrix: Record<Tier, Record<Tier, number>>;
  routedShare: Record<Tier, number>;
  misses: Array<{ item: CorpusItem; assessment: Assessment }>;
}

export type AgentKind = Harness | 'synthetic';
export interface AgentFigures {
  count: number;
  exact: number;
  /** Labelled light or standard, and how many of those went to heavy or thinking. */
  lightOrStandard: number;
  overRouted: number;
}
const AGENT_KINDS: readonly AgentKind[] = [...HARNESSES, 'synthetic'];

const RANK: Record<Tier, number> = { light: 0, standard: 1, heavy: 2, thinking: 3 };
const emptyRow = (): Record<Tier, number> => ({ light: 0, standard: 0, heavy: 0, thinking: 0 });

export function evaluate(items: readonly CorpusItem[], thresholds: AssessmentThresholds = DEFAULT_ASSESSMENT_THRESHOLDS, model: RoutingModel = ROUTING_MODEL): Evaluation {
  const matrix = { light: emptyRow(), standard: emptyRow(), heavy: emptyRow(), thinking: emptyRow() };
  const byLang = { zh: { hit: 0, count: 0 }, en: { hit: 0, count: 0 } };
  let within = 0;
  let agentOverRouted = 0;
  const agentHits = Object.fromEntries([...AGENT_KINDS, 'all'].map((kind) => [kind, { count: 0, hit: 0, lightOrStandard: 0, overRouted: 0 }]));
  const misses: Evaluation['misses'] = [];
  for (const item of items) {
    const assessment = assessComplexity(toRequest(item), thresholds, model);
    matrix[item.tier][assessment.tier] += 1;
    byLang[item.lang].count += 1;
    if (assessment.tier === item.tier) byLang[item.lang].hit += 1;
    else misses.push({ item, assessment });
    if (Math.abs(RANK[item.tier] - RANK[assessment.tier]) <= 1) within += 1;
    if (item.agent && RANK[item.tier] <= 1 && RANK[assessment.tier] >= 2) agentOverRouted += 1;
    if (item.agent) {
      for (const kind of [item.agent.harness ?? 'synthetic', 'all']) {
        const figures = agentHits[kind];
        if (!figures) continue;
        figures.count += 1;
        if (assessment.tier === item.tier) figures.hit += 1;
        if (RANK[item.tier] <= 1) figures.lightOrStandard += 1;
        if (RANK[item.tier] <= 1 && RANK[assessment.tier] >= 2) figures.overRouted += 1;
      }
    }
  }
  const share = (hit: number, count: number): number => (count === 0 ? 0 : hit / count);
  const tierTotal = (tier: Tier): number => TIERS.reduce((sum, routed) => sum + matrix[tier][routed], 0);
  const routedTotal = (tier: Tier): number => TIERS.reduce((sum, label) => sum + matrix[label][tier], 0);
  const byTier = Object.fromEntries(TIERS.map((tier) => [tier, { exact: share(matrix[tier][tier], tierTotal(tier)), count: tierTotal(tier) }])) as Evaluation['byTier'];
  return {
    count: items.length,
    exact: share(byLang.zh.hit + byLang.en.hit, items.length),
    withinOne: share(within, items.length),
    thinkingRecall: byTier.thinking.exact,
    lightToThinking: matrix.light.thinking,
    agentOverRouted,
    agent: Object.fromEntries(
      Object.entries(agentHits).map(([kind, f]) => [kind, { count: f.count, exact: share(f.hit, f.count), lightOrStandard: f.lightOrStandard, overRouted: f.overRouted }]),
    ) as Evaluation['agent'],
    byLang: { zh: { exact: share(byLang.zh.hit, byLang.zh.count), count: byLang.zh.count }, en: { exact: share(byLang.en.hit, byLang.en.count), count: byLang.en.count } },
    byTier,
    matrix,
    routedShare: Object.fromEntries(TIERS.map((tier) => [tier, share(routedTotal(tier), items.length)])) as Record<Tier, number>,
    misses,
  };
}

/** Output tokens a task of each labelled tier is assumed to produce, for the cost estimate (thinking includes its reasoning). */
const ASSUMED_OUTPUT: Record<Tier, number> = { light: 150, standard: 600, heavy: 1500, thinking: 3000 };

/**
 * What the items would cost, in CNY, routed as assessed and all sent to
 * heavy, at the built-in catalog's prices and its general model's unify
 * factors. An estimate for comparing routings (input tokens estimated,
 * output assumed per labelled tier), not a bill.
 */
export function routingCost(items: readonly CorpusItem[]): { routed: number; allHeavy: number; byTier: Record<Tier, { routed: number; allHeavy: number }> } {
  const catalog = builtinCatalogJson({}) as { models: Array<{ routes: Record<Tier, Array<{ unify?: { input?: number; output?: number }; thinking?: boolean }>> }> };
  const routes = catalog.models[0]?.routes;
  const price = (key: keyof typeof BUILTIN_PRICES): number => Number(BUILTIN_PRICES[key]);
  const cost = (tier: Tier, input: number, output: number): number => {
    const route = routes?.[tier]?.[routes[tier].length - 1];
    const thinking = route?.thinking === true ? 'thinking' : 'no_thinking';
    const unifyIn = route?.unify?.input ?? 1;
    const unifyOut = route?.unify?.output ?? 1;
    return (input * unifyIn * price(`${thinking}.input_cache_miss`) + output * unifyOut * price(`${thinking}.output`)) / 1e6;
  };
  let routed = 0;
  let allHeavy = 0;
  const byTier = Object.fromEntries(TIERS.map((tier) => [tier, { routed: 0, allHeavy: 0 }])) as Record<Tier, { routed: number; allHeavy: number }>;
  for (const item of items) {
    const request = toRequest(item);
    const input = inputTokens(request);
    const output = ASSUMED_OUTPUT[item.tier];
    const tier = assessComplexity(request, DEFAULT_ASSESSMENT_THRESHOLDS).tier;
    const [asRouted, asHeavy] = [cost(tier, input, output), cost('heavy', input, output)];
    routed += asRouted;
    allHeavy += asHeavy;
    byTier[tier].routed += asRouted;
    byTier[tier].allHeavy += asHeavy;
  }
  return { routed, allHeavy, byTier };
}

function inputTokens(request: CanonicalRequest): number {
  const texts = [request.system ?? '', JSON.stringify(request.tools ?? []), JSON.stringify(request.messages)];
  return texts.reduce((sum, text) => sum + estimateTokens(text), 0);
}

const percent = (value: number): string => `${(value * 100).toFixed(1)}%`;

function report(name: string, e: Evaluation, verbose: boolean): string {
  const lines = [
    `${name}: ${e.count} items — exact ${percent(e.exact)}, within one tier ${percent(e.withinOne)}, thinking recall ${percent(e.thinkingRecall)}, light→thinking ${e.lightToThinking}, agent light/standard→heavy+ ${e.agentOverRouted}`,
    `  by language: zh ${percent(e.byLang.zh.exact)} (${e.byLang.zh.count}), en ${percent(e.byLang.en.exact)} (${e.byLang.en.count})`,
    `  by tier:     ${TIERS.map((tier) => `${tier} ${percent(e.byTier[tier].exact)} (${e.byTier[tier].count})`).join(', ')}`,
    `  routed share: ${TIERS.map((tier) => `${tier} ${percent(e.routedShare[tier])}`).join(', ')}`,
    `  agent turns: ${(['all', ...AGENT_KINDS] as const)
      .filter((kind) => e.agent[kind].count > 0)
      .map((kind) => `${kind} ${percent(e.agent[kind].exact)} of ${e.agent[kind].count} (light/standard→heavy+ ${e.agent[kind].overRouted} of ${e.agent[kind].lightOrStandard})`)
      .join(', ')}`,
    `  confusion (rows label, columns routed):`,
    `  ${'label'.padEnd(10)}${TIERS.map((tier) => tier.padStart(10)).join('')}`,
    ...TIERS.map((label) => `  ${label.padEnd(10)}${TIERS.map((routed) => String(e.matrix[label][routed]).padStart(10)).join('')}`),
  ];
  if (verbose) {
    lines.push('  misses:');
    for (const { item, assessment } of e.misses) {
      lines.push(`    ${item.id.padEnd(22)} ${item.tier.padEnd(8)} -> ${assessment.tier.padEnd(8)} ${assessment.score.toFixed(2)} [${assessment.reasons.join(',')}] ${item.prompt.replace(/\s+/g, ' ').slice(0, 70)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * µs per assessment, per request: each request assessed in five batches of
 * `iterations / 5` calls in a row after a warm-up (as a running gateway
 * assesses with a warm JIT), the median batch's mean taken, so that a batch
 * the machine's other work preempted does not count as assessment cost; then
 * p50, p95 and max over the requests. Two passes over all requests warm the
 * JIT first, so the figures are those of a gateway that has been serving for
 * a while.
 */
export function benchAssessment(requests: readonly CanonicalRequest[], iterations = 200): { p50: number; p95: number; max: number } {
  for (let pass = 0; pass < 2; pass += 1) for (const request of requests) for (let i = 0; i < 50; i += 1) assessComplexity(request, DEFAULT_ASSESSMENT_THRESHOLDS);
  const samples: number[] = [];
  const perBatch = Math.max(1, Math.round(iterations / BATCHES));
  for (const request of requests) {
    for (let i = 0; i < 20; i += 1) assessComplexity(request, DEFAULT_ASSESSMENT_THRESHOLDS);
    const batches: number[] = [];
    for (let batch = 0; batch < BATCHES; batch += 1) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < perBatch; i += 1) assessComplexity(request, DEFAULT_ASSESSMENT_THRESHOLDS);
      batches.push(Number(process.hrtime.bigint() - start) / 1000 / perBatch);
    }
    batches.sort((a, b) => a - b);
    samples.push(batches[Math.floor(BATCHES / 2)] ?? 0);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return { p50: at(0.5), p95: at(0.95), max: samples[samples.length - 1] ?? 0 };
}
const BATCHES = 5;

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const corpusArg = process.argv.indexOf('--corpus');
  const corpus = loadCorpus(corpusArg > 0 ? process.argv[corpusArg + 1] : undefined);
  const verbose = process.argv.includes('--verbose');
  const out: string[] = [`corpus: ${corpus.length} items; thresholds ${JSON.stringify(DEFAULT_ASSESSMENT_THRESHOLDS)}; the test split is never used for tuning\n`];
  for (const split of ['train', 'dev', 'test'] as const satisfies readonly Split[]) {
    out.push(report(split, evaluate(corpus.filter((item) => item.split === split)), verbose && split !== 'train'));
  }
  for (const [name, items] of [['test split', corpus.filter((item) => item.split === 'test')], ['whole corpus', corpus]] as const) {
    const { routed, allHeavy, byTier } = routingCost(items);
    out.push(
      [
        `cost of the ${name} at built-in catalog prices (estimate, CNY): routed ${routed.toFixed(4)} vs everything to heavy ${allHeavy.toFixed(4)} (${percent(routed / allHeavy)})`,
        ...TIERS.map((tier) => `  routed to ${tier.padEnd(8)} ${byTier[tier].routed.toFixed(4)} (as heavy: ${byTier[tier].allHeavy.toFixed(4)})`),
        '  (the thinking tier is billed at thinking prices, twice heavy\'s here: routing pays more for proofs and derivations and saves on light and standard asks)',
      ].join('\n') + '\n',
    );
  }
  if (process.argv.includes('--bench')) {
    const timing = benchAssessment(corpus.map(toRequest));
    out.push(`assessment per request over the corpus: p50 ${timing.p50.toFixed(1)} µs, p95 ${timing.p95.toFixed(1)} µs, max ${timing.max.toFixed(1)} µs\n`);
  }
  process.stdout.write(out.join('\n'));
}
