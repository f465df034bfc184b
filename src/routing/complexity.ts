// Complexity assessment (DESIGN §7): picks the tier that should serve a
// request before any upstream call. It measures the request
// (complexity-features.ts: lengths, turns, cue words in Chinese and English,
// hashed n-grams of the ask) and weighs the measures with a model learned
// from the labelled corpus in test/fixtures/routing/ (routing-model.ts).
//
// The score is the expected tier under the model's probabilities, from 0
// (surely light) to 1 (surely thinking); the catalog's `assessment` cut points
// split it into light, standard and the top two tiers, and between heavy and
// thinking the likelier one wins. `x-route` names what weighed most.
import type { CanonicalRequest } from '../data-plane/canonical';
import type { AssessmentThresholds, Tier } from './catalog.types';
import { extractFeatures, type FeatureName } from './complexity-features';
import { MODEL_TIERS, ROUTING_MODEL, type RoutingModel } from './routing-model';

export type ReasonTag =
  | 'explicit_thinking'
  | 'trivial'
  | 'length'
  | 'long'
  | 'paste'
  | 'history'
  | 'many_turns'
  | 'code'
  | 'math'
  | 'reasoning'
  | 'analysis'
  | 'multi_step'
  | 'task'
  | 'short'
  | 'questions'
  | 'large_output'
  | 'tools'
  | 'tool_loop'
  | 'system'
  | 'images'
  | 'wording';

export interface Assessment {
  tier: Tier;
  /** 0..1, two decimals. */
  score: number;
  /** Short tags (ReasonTag) naming what weighed most toward the tier, most weighty first. */
  reasons: string[];
}

/** The cut points the model was tuned with; the catalog's `assessment` overrides them. */
export const DEFAULT_ASSESSMENT_THRESHOLDS: Readonly<AssessmentThresholds> = ROUTING_MODEL.thresholds;

/** At most this many reasons are named, and only those that weighed at least MIN_REASON_WEIGHT (in logits). */
const MAX_REASONS = 4;
const MIN_REASON_WEIGHT = 0.05;

const TAG: Record<FeatureName | 'wording', ReasonTag> = {
  ask_length: 'length',
  ask_short: 'short',
  task_length: 'length',
  paste: 'paste',
  long: 'long',
  history: 'history',
  turns: 'many_turns',
  code: 'code',
  analysis: 'analysis',
  multi_step: 'multi_step',
  math: 'math',
  reasoning: 'reasoning',
  weak_reasoning: 'reasoning',
  task: 'task',
  code_in_paste: 'code',
  reasoning_with_math: 'reasoning',
  no_cue: 'short',
  questions: 'questions',
  large_output: 'large_output',
  tools: 'tools',
  tool_loop: 'tool_loop',
  tool_rounds: 'tool_loop',
  system: 'system',
  images: 'images',
  wording: 'wording',
};

export function assessComplexity(request: CanonicalRequest, thresholds: AssessmentThresholds, model: RoutingModel = ROUTING_MODEL): Assessment {
  const features = extractFeatures(request);
  const p = model.probabilities(features);
  const [, standard = 0, heavy = 0, thinking = 0] = p;
  const score = Math.round(((standard + 2 * heavy + 3 * thinking) / 3) * 100) / 100;

  // `enabled` asks for deep reasoning; `adaptive` (or no setting) leaves the
  // tier to the assessment; `disabled` never thinks.
  const setting = request.thinking?.type;
  let tier: Tier;
  if (score < thresholds.standard) tier = 'light';
  else if (score < thresholds.heavy) tier = 'standard';
  else tier = setting !== 'disabled' && thinking > heavy ? 'thinking' : 'heavy';

  const reasons: string[] = [];
  for (const [name, weight] of model.contributions(features, MODEL_TIERS.indexOf(tier))) {
    if (reasons.length >= MAX_REASONS || weight < MIN_REASON_WEIGHT) break;
    const tag = TAG[name];
    if (!reasons.includes(tag)) reasons.push(tag);
  }
  if (tier === 'light' && features.trivial) reasons.push('trivial');
  if (setting === 'enabled') return { tier: 'thinking', score, reasons: ['explicit_thinking', ...reasons] };
  return { tier, score, reasons };
}
