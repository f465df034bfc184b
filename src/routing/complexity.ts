// Complexity assessment (docs/architecture.md §5): picks the tier that should serve a
// request before any upstream call. It measures the request
// (complexity-features.ts: lengths, turns, cue words in Chinese and English,
// hashed n-grams of the ask) and weighs the measures with a model learned
// from the labelled corpus in test/fixtures/routing/ (routing-model.ts).
//
// The score is where the median tier lies under the model's probabilities,
// from 0 to 1: light is the band below 1/3, standard up to 2/3, and the top
// two tiers (heavy and thinking) above; inside a band, the position says how
// far past the middle of the distribution the band's probability reaches. So
// cut points at 1/3 and 2/3 pick the median tier, and the catalog's
// `assessment` cut points move the boundaries: a lower `heavy` sends more to
// the top tiers. Between heavy and thinking the likelier one wins.
// `x-route` names what weighed most.
import type { CanonicalRequest } from '../core/canonical';
import type { AssessmentThresholds, Tier } from '../core/catalog.types';
import { FEATURE_NAMES, extractFeatures, type FeatureName } from './complexity-features';
import { MODEL_TIERS, ROUTING_MODEL, type RoutingModel } from './routing-model';

export type ReasonTag =
  | 'explicit_thinking'
  | 'trivial'
  | 'length'
  | 'long'
  | 'paste'
  | 'history'
  | 'many_turns'
  | 'lookup'
  | 'chat'
  | 'produce'
  | 'explain'
  | 'code'
  | 'edit'
  | 'analysis'
  | 'design'
  | 'breadth'
  | 'reasoning'
  | 'optimisation'
  | 'math'
  | 'arithmetic'
  | 'constraints'
  | 'show_work'
  | 'follow_up'
  | 'list'
  | 'figures'
  | 'short'
  | 'questions'
  | 'deliberation'
  | 'closed'
  | 'tool_loop'
  | 'tool_failed'
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

/** At most this many reasons are named (`follow_up` among them), and only those that weighed at least MIN_REASON_WEIGHT (in logits); `trivial` and `explicit_thinking` come on top. */
const MAX_REASONS = 4;
const MIN_REASON_WEIGHT = 0.05;
/** How many follow-ups back ("go on" after "continue" after the ask) the assessment looks. */
const MAX_FOLLOW_UPS = 3;

const TAG: Record<FeatureName | 'wording', ReasonTag> = {
  ask_length: 'length',
  ask_short: 'short',
  task_length: 'length',
  paste: 'paste',
  long: 'long',
  history: 'history',
  turns: 'many_turns',
  lookup: 'lookup',
  chat: 'chat',
  produce: 'produce',
  artefact: 'produce',
  explain: 'explain',
  code: 'code',
  edit: 'edit',
  analysis: 'analysis',
  design: 'design',
  breadth: 'breadth',
  reasoning: 'reasoning',
  optimise: 'optimisation',
  math: 'math',
  arithmetic: 'arithmetic',
  constraints: 'constraints',
  show_work: 'show_work',
  proceed: 'follow_up',
  deliberate: 'deliberation',
  phrase: 'lookup',
  code_shape: 'code',
  code_in_paste: 'code',
  list: 'list',
  numbers: 'figures',
  questions: 'questions',
  reasoning_with_math: 'reasoning',
  constraints_with_data: 'constraints',
  closed_question: 'closed',
  quoted: 'closed',
  no_cue: 'short',
  tool_loop: 'tool_loop',
  tool_rounds: 'tool_loop',
  tool_failed: 'tool_failed',
  system: 'system',
  images: 'images',
  wording: 'wording',
};

export function assessComplexity(request: CanonicalRequest, thresholds: AssessmentThresholds, model: RoutingModel = ROUTING_MODEL): Assessment {
  // A follow-up that approves or continues ("yes, go ahead", "继续") is the
  // work it carries on: the conversation up to the ask it follows is assessed
  // instead, as it was when that ask was made.
  let features = extractFeatures(request);
  let followUps = 0;
  while (features.carriesOnUpTo > 0 && followUps < MAX_FOLLOW_UPS) {
    followUps += 1;
    features = extractFeatures({ ...request, messages: request.messages.slice(0, features.carriesOnUpTo) });
  }
  const p = model.probabilities(features);
  const [light = 0, standard = 0, heavy = 0, thinking = 0] = p;
  const score = Math.round(medianPosition(light, standard, heavy + thinking) * 100) / 100;

  // `enabled` asks for deep reasoning; `adaptive` (or no setting) leaves the
  // tier to the assessment; `disabled` never thinks.
  const setting = request.thinking?.type;
  let tier: Tier;
  if (score < thresholds.standard) tier = 'light';
  else if (score < thresholds.heavy) tier = 'standard';
  else tier = setting !== 'disabled' && thinking > heavy ? 'thinking' : 'heavy';

  const reasons = topReasons(model.contributions(features, MODEL_TIERS.indexOf(tier)), MAX_REASONS - (followUps > 0 ? 1 : 0));
  if (tier === 'light' && features.trivial) reasons.push('trivial');
  if (followUps > 0) reasons.unshift('follow_up');
  if (setting === 'enabled') return { tier: 'thinking', score, reasons: ['explicit_thinking', ...reasons] };
  return { tier, score, reasons };
}

/** Tags by contribution index: the features in FEATURE_NAMES order, then the wording. */
const TAG_AT: readonly ReasonTag[] = [...FEATURE_NAMES.map((name) => TAG[name]), TAG.wording];
const TAKEN = new Uint8Array(TAG_AT.length);

/** The tags of the largest pushes of at least MIN_REASON_WEIGHT, largest first, at most `limit` distinct: a selection, no sort. */
function topReasons(pushes: Float64Array, limit: number): string[] {
  const reasons: string[] = [];
  TAKEN.fill(0);
  while (reasons.length < limit) {
    let best = -1;
    let bestWeight = MIN_REASON_WEIGHT;
    for (let i = 0; i < TAG_AT.length; i += 1) {
      const weight = pushes[i] ?? 0;
      if (TAKEN[i] === 0 && weight >= bestWeight) {
        best = i;
        bestWeight = weight;
      }
    }
    if (best < 0) break;
    TAKEN[best] = 1;
    const tag = TAG_AT[best];
    if (tag !== undefined && !reasons.includes(tag)) reasons.push(tag);
  }
  return reasons;
}

/**
 * The median of the tier distribution as a position in 0..1: light, standard
 * and top each own a third, and inside its third the position is how far the
 * cumulative probability has to go into the tier to reach one half.
 */
export function medianPosition(light: number, standard: number, top: number): number {
  if (light >= 0.5) return (0.5 / light) / 3;
  if (light + standard >= 0.5) return (1 + (0.5 - light) / standard) / 3;
  return (2 + Math.min(1, (0.5 - light - standard) / Math.max(top, 1e-9))) / 3;
}
