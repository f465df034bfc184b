// The learned part of the complexity assessment: a multinomial logistic
// regression over the named features and hashed n-grams of
// complexity-features.ts. Its weights are trained by `npm run train:routing`
// (scripts/train-routing.ts) on the labelled corpus in test/fixtures/routing/
// and committed as routing-model.json, which is read once, at start. On the
// hot path it is a few thousand multiply-adds: no I/O, no allocation beyond
// the feature arrays.
import type { AssessmentThresholds, Tier } from '../core/catalog.types';
import { FEATURE_NAMES, GRAM_BUCKETS, type Features } from './complexity-features';
import weights from './routing-model.json' with { type: 'json' };

/** The model file's form (what the training script writes). */
export interface RoutingModelFile {
  version: 1;
  tiers: Tier[];
  features: string[];
  gram_buckets: number;
  bias: number[];
  /** dense[tier][feature] */
  dense: number[][];
  /** grams[tier][bucket] */
  grams: number[][];
  /** Cut points on the score (the median tier's position, 0..1; 1/3 and 2/3 are the median rule), chosen on the dev split. */
  thresholds: AssessmentThresholds;
  training: Record<string, unknown>;
}

export const MODEL_TIERS = ['light', 'standard', 'heavy', 'thinking'] as const satisfies readonly Tier[];
const K = MODEL_TIERS.length;
const D = FEATURE_NAMES.length;

export class RoutingModel {
  readonly thresholds: Readonly<AssessmentThresholds>;
  private readonly bias: Float64Array;
  /** dense[feature * K + tier] */
  private readonly dense: Float64Array;
  /** grams[bucket * K + tier]: the four weights of a bucket side by side, in single precision (half the cache lines; the weights are rounded to 4 decimals anyway). */
  private readonly grams: Float32Array;

  constructor(file: RoutingModelFile) {
    if (file.version !== 1) throw new Error(`routing model: version ${String(file.version)} is not 1`);
    if (file.gram_buckets !== GRAM_BUCKETS) throw new Error(`routing model: ${file.gram_buckets} n-gram buckets, the features make ${GRAM_BUCKETS}`);
    if (file.features.join(',') !== FEATURE_NAMES.join(',')) throw new Error('routing model: its features are not the ones complexity-features.ts measures; retrain with npm run train:routing');
    if (file.tiers.join(',') !== MODEL_TIERS.join(',')) throw new Error(`routing model: tiers ${file.tiers.join(',')}, expected ${MODEL_TIERS.join(',')}`);
    this.bias = Float64Array.from(file.bias);
    this.dense = new Float64Array(D * K);
    this.grams = new Float32Array(GRAM_BUCKETS * K);
    for (let k = 0; k < K; k += 1) {
      for (let i = 0; i < D; i += 1) this.dense[i * K + k] = file.dense[k]?.[i] ?? 0;
      for (let b = 0; b < GRAM_BUCKETS; b += 1) this.grams[b * K + k] = file.grams[k]?.[b] ?? 0;
    }
    this.thresholds = { ...file.thresholds };
  }

  /** Per-tier sums of the n-gram weights from the last `probabilities` call, for `contributions`. */
  private readonly gramSums = new Float64Array(K);
  /** Where `probabilities` writes unless given an array: valid until the next call. */
  private readonly scratch = new Float64Array(K);

  /** Tier probabilities, in MODEL_TIERS order. */
  probabilities(features: Features, into: Float64Array = this.scratch): Float64Array {
    const logits = this.logits(features, into);
    let max = -Infinity;
    for (let k = 0; k < K; k += 1) max = Math.max(max, logits[k] ?? 0);
    let sum = 0;
    for (let k = 0; k < K; k += 1) {
      const e = Math.exp((logits[k] ?? 0) - max);
      logits[k] = e;
      sum += e;
    }
    for (let k = 0; k < K; k += 1) logits[k] = (logits[k] ?? 0) / sum;
    return logits;
  }

  private logits(features: Features, into: Float64Array): Float64Array {
    for (let k = 0; k < K; k += 1) into[k] = this.bias[k] ?? 0;
    const { dense, grams, gramCount, gramValue } = features;
    for (let i = 0; i < D; i += 1) {
      const x = dense[i] ?? 0;
      if (x === 0) continue;
      const base = i * K;
      for (let k = 0; k < K; k += 1) into[k] = (into[k] ?? 0) + x * (this.dense[base + k] ?? 0);
    }
    let g0 = 0;
    let g1 = 0;
    let g2 = 0;
    let g3 = 0;
    const weights = this.grams;
    for (let j = 0; j < gramCount; j += 1) {
      const base = (grams[j] ?? 0) * K;
      g0 += weights[base] ?? 0;
      g1 += weights[base + 1] ?? 0;
      g2 += weights[base + 2] ?? 0;
      g3 += weights[base + 3] ?? 0;
    }
    this.gramSums[0] = g0;
    this.gramSums[1] = g1;
    this.gramSums[2] = g2;
    this.gramSums[3] = g3;
    into[0] = (into[0] ?? 0) + g0 * gramValue;
    into[1] = (into[1] ?? 0) + g1 * gramValue;
    into[2] = (into[2] ?? 0) + g2 * gramValue;
    into[3] = (into[3] ?? 0) + g3 * gramValue;
    return into;
  }

  /** Where `contributions` writes: valid until the next call. */
  private readonly pushes = new Float64Array(D + 1);

  /**
   * How much each named feature (at its index in FEATURE_NAMES), and the
   * ask's wording as a whole (at index FEATURE_NAMES.length), pushed the
   * request toward `tier` rather than toward the tiers on average, in logits;
   * 0 for a feature that is absent. Call right after `probabilities` for the
   * same features: the wording's share reuses that pass's n-gram sums. The
   * array is shared: read it before the next call.
   */
  contributions(features: Features, tier: number): Float64Array {
    const out = this.pushes;
    for (let i = 0; i < D; i += 1) {
      const x = features.dense[i] ?? 0;
      if (x === 0) {
        out[i] = 0;
        continue;
      }
      const base = i * K;
      let mean = 0;
      for (let k = 0; k < K; k += 1) mean += (this.dense[base + k] ?? 0) / K;
      out[i] = x * ((this.dense[base + tier] ?? 0) - mean);
    }
    let mean = 0;
    for (let k = 0; k < K; k += 1) mean += (this.gramSums[k] ?? 0) / K;
    out[D] = ((this.gramSums[tier] ?? 0) - mean) * features.gramValue;
    return out;
  }
}

/**
 * The committed model, loaded once at start. A model file that does not match
 * the features measured (complexity-features.ts changed, not retrained) is
 * reported by `routingModelProblem`; the gateway refuses to start on it, and
 * only the training script runs.
 */
export const { model: ROUTING_MODEL, problem: routingModelProblem } = loadCommitted(weights as RoutingModelFile);

function loadCommitted(file: RoutingModelFile): { model: RoutingModel; problem: string | undefined } {
  try {
    return { model: new RoutingModel(file), problem: undefined };
  } catch (error) {
    const features = [...FEATURE_NAMES];
    const empty = { ...file, features, gram_buckets: GRAM_BUCKETS, tiers: [...MODEL_TIERS], bias: [0, 0, 0, 0], dense: [], grams: [] };
    return { model: new RoutingModel(empty), problem: (error as Error).message };
  }
}
