// `npm run train:routing`: fits the complexity assessor's weights on the
// corpus's train split and writes src/routing/routing-model.json.
//
// - Model: multinomial logistic regression over the named features and the
//   hashed n-grams of complexity-features.ts, class-balanced, L2-regularised,
//   full-batch Adam from zero weights (deterministic: same corpus, same file).
// - Choice: the regularisation strengths are picked on the dev split; the
//   score's cut points are the median rule (see MEDIAN_RULE).
// - The test split is never read here. `npm run eval:routing` reports it.
//
// An operator retraining with their own prompts adds lines to
// test/fixtures/routing/corpus.jsonl (or passes `--corpus file.jsonl` in the
// same form), runs this, then `npm run eval:routing`, and ships the JSON.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AssessmentThresholds } from '../src/core/catalog.types';
import { FEATURE_NAMES, GRAM_BUCKETS, copyFeatures, extractFeatures, type Features } from '../src/routing/complexity-features';
import { MODEL_TIERS, RoutingModel, type RoutingModelFile } from '../src/routing/routing-model';
import { evaluate, type Evaluation } from './eval-routing';
import { CORPUS_PATH, loadCorpus, toRequest, type CorpusItem } from './routing-corpus';

export const MODEL_PATH = fileURLToPath(new URL('../src/routing/routing-model.json', import.meta.url));

const K = MODEL_TIERS.length;
const D = FEATURE_NAMES.length;
const B = GRAM_BUCKETS;

interface Example {
  features: Features;
  label: number;
  weight: number;
}

interface Params {
  bias: Float64Array;
  dense: Float64Array; // [k * D + i]
  grams: Float64Array; // [k * B + b]
}

/** Items whose label the assessor must learn: an explicit `thinking: enabled` is a rule, not a label to fit. */
export const learnable = (item: CorpusItem): boolean => item.thinking !== 'enabled';

function examples(items: readonly CorpusItem[]): Example[] {
  const counts = new Array<number>(K).fill(0);
  for (const item of items) {
    const label = MODEL_TIERS.indexOf(item.tier);
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return items.map((item) => {
    const label = MODEL_TIERS.indexOf(item.tier);
    return { features: copyFeatures(extractFeatures(toRequest(item))), label, weight: items.length / (K * (counts[label] ?? 1)) };
  });
}

function fit(data: readonly Example[], lambdaDense: number, lambdaGrams: number, epochs: number): Params {
  const params: Params = { bias: new Float64Array(K), dense: new Float64Array(K * D), grams: new Float64Array(K * B) };
  const all = [params.bias, params.dense, params.grams];
  const m = all.map((a) => new Float64Array(a.length));
  const v = all.map((a) => new Float64Array(a.length));
  const grads = all.map((a) => new Float64Array(a.length));
  const rate = 0.05;
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  const logits = new Float64Array(K);
  const totalWeight = data.reduce((sum, e) => sum + e.weight, 0);
  for (let epoch = 1; epoch <= epochs; epoch += 1) {
    for (const g of grads) g.fill(0);
    const [gBias, gDense, gGrams] = grads as [Float64Array, Float64Array, Float64Array];
    for (const { features, label, weight } of data) {
      forward(params, features, logits);
      const scale = weight / totalWeight;
      for (let k = 0; k < K; k += 1) {
        const err = ((logits[k] ?? 0) - (k === label ? 1 : 0)) * scale;
        if (err === 0) continue;
        gBias[k] = (gBias[k] ?? 0) + err;
        for (let i = 0; i < D; i += 1) gDense[k * D + i] = (gDense[k * D + i] ?? 0) + err * (features.dense[i] ?? 0);
        const g = err * features.gramValue;
        for (let j = 0; j < features.gramCount; j += 1) {
          const at = k * B + (features.grams[j] ?? 0);
          gGrams[at] = (gGrams[at] ?? 0) + g;
        }
      }
    }
    for (let i = 0; i < gDense.length; i += 1) gDense[i] = (gDense[i] ?? 0) + lambdaDense * (params.dense[i] ?? 0);
    for (let i = 0; i < gGrams.length; i += 1) gGrams[i] = (gGrams[i] ?? 0) + lambdaGrams * (params.grams[i] ?? 0);
    const correction1 = 1 - beta1 ** epoch;
    const correction2 = 1 - beta2 ** epoch;
    all.forEach((weights, index) => {
      const [mi, vi, gi] = [m[index], v[index], grads[index]] as [Float64Array, Float64Array, Float64Array];
      for (let i = 0; i < weights.length; i += 1) {
        const g = gi[i] ?? 0;
        if (g === 0 && (mi[i] ?? 0) === 0) continue;
        mi[i] = beta1 * (mi[i] ?? 0) + (1 - beta1) * g;
        vi[i] = beta2 * (vi[i] ?? 0) + (1 - beta2) * g * g;
        weights[i] = (weights[i] ?? 0) - (rate * ((mi[i] ?? 0) / correction1)) / (Math.sqrt((vi[i] ?? 0) / correction2) + eps);
      }
    });
  }
  return params;
}

/** Softmax probabilities into `out`. */
function forward(params: Params, features: Features, out: Float64Array): void {
  let max = -Infinity;
  for (let k = 0; k < K; k += 1) {
    let z = params.bias[k] ?? 0;
    for (let i = 0; i < D; i += 1) z += (features.dense[i] ?? 0) * (params.dense[k * D + i] ?? 0);
    let g = 0;
    for (let j = 0; j < features.gramCount; j += 1) g += params.grams[k * B + (features.grams[j] ?? 0)] ?? 0;
    z += g * features.gramValue;
    out[k] = z;
    max = Math.max(max, z);
  }
  let sum = 0;
  for (let k = 0; k < K; k += 1) {
    out[k] = Math.exp((out[k] ?? 0) - max);
    sum += out[k] ?? 0;
  }
  for (let k = 0; k < K; k += 1) out[k] = (out[k] ?? 0) / sum;
}

const round = (x: number): number => Math.round(x * 1e4) / 1e4;

function toFile(params: Params, thresholds: AssessmentThresholds, training: Record<string, unknown>): RoutingModelFile {
  return {
    version: 1,
    tiers: [...MODEL_TIERS],
    features: [...FEATURE_NAMES],
    gram_buckets: B,
    bias: [...params.bias].map(round),
    dense: MODEL_TIERS.map((_, k) => [...params.dense.subarray(k * D, (k + 1) * D)].map(round)),
    grams: MODEL_TIERS.map((_, k) => [...params.grams.subarray(k * B, (k + 1) * B)].map(round)),
    thresholds,
    training,
  };
}

/**
 * The cut points written with the weights: the median rule (complexity.ts).
 * They are not tuned: on a dev split of a hundred-odd items a tuned cut point
 * follows a handful of borderline items, and the class-balanced probabilities
 * already put the boundary where the labels do. Operators who want to lean
 * one way set the catalog's `assessment`.
 */
const MEDIAN_RULE: AssessmentThresholds = { standard: 0.3333, heavy: 0.6667 };

/** What the choice on dev maximises: exact agreement, then within-one-tier agreement, then thinking recall; light asks sent to thinking and agent turns over-routed to heavy count against it. */
const objective = (e: Evaluation): number =>
  e.exact + 0.5 * e.withinOne + 0.25 * e.thinkingRecall - (e.lightToThinking > 0 ? 1 : 0) - (e.agent.all.count === 0 ? 0 : e.agent.all.overRouted / e.agent.all.count);

function main(): void {
  const corpusArg = process.argv.indexOf('--corpus');
  const corpus = loadCorpus(corpusArg > 0 ? process.argv[corpusArg + 1] : CORPUS_PATH);
  const train = corpus.filter((item) => item.split === 'train' && learnable(item));
  const dev = corpus.filter((item) => item.split === 'dev');
  const epochs = process.argv.includes('--quick') ? 150 : 500;
  const data = examples(train);
  process.stdout.write(`train ${train.length} items, dev ${dev.length}; test split not read\n`);

  let chosen: { file: RoutingModelFile; score: number; evaluation: Evaluation } | undefined;
  // Strongest regularisation first: on a tie on dev the simpler model is kept.
  for (const lambdaDense of [1e-2, 1e-3, 1e-4]) {
    for (const lambdaGrams of [1e-2, 3e-3, 1e-3, 3e-4, 1e-4]) {
      const started = performance.now();
      const params = fit(data, lambdaDense, lambdaGrams, epochs);
      const evaluation = evaluate(dev, MEDIAN_RULE, new RoutingModel(toFile(params, MEDIAN_RULE, {})));
      const training = { items: train.length, dev_items: dev.length, epochs, lambda_dense: lambdaDense, lambda_grams: lambdaGrams, dev_exact: round(evaluation.exact), dev_within_one: round(evaluation.withinOne), dev_thinking_recall: round(evaluation.thinkingRecall) };
      const file = toFile(params, MEDIAN_RULE, training);
      const score = objective(evaluation);
      process.stdout.write(
        `λ dense ${lambdaDense} grams ${lambdaGrams}: dev exact ${(evaluation.exact * 100).toFixed(1)}%, within one ${(evaluation.withinOne * 100).toFixed(1)}%, thinking recall ${(evaluation.thinkingRecall * 100).toFixed(1)}%  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
      );
      if (!chosen || score > chosen.score) chosen = { file, score, evaluation };
    }
  }
  if (!chosen) throw new Error('nothing trained');
  writeFileSync(MODEL_PATH, `${JSON.stringify(chosen.file)}\n`);
  process.stdout.write(`wrote ${MODEL_PATH}: ${JSON.stringify(chosen.file.training)}, thresholds ${JSON.stringify(chosen.file.thresholds)}\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main();
