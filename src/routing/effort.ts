// The caller's effort (Anthropic `output_config.effort`, or OpenAI's
// `reasoning_effort` where it does not already ask for thinking) bounds the
// assessed tier, the way `thinking` does (docs/architecture.md §5):
//   minimal, low  → at most standard: the caller wants a quick, cheap answer;
//   medium, high  → as assessed (high is the Messages API's default);
//   xhigh, max    → at least heavy: the caller wants the most capable model.
// `none` says only that the caller wants no reasoning (thinking disabled), and
// an explicit `thinking: enabled` has already chosen the thinking tier: both
// leave the tier to the assessment. The reason names the bound that changed it.
import type { Effort } from '../core/canonical';
import type { Assessment } from './complexity';
import type { Tier } from '../core/catalog.types';

const RANK: Record<Tier, number> = { light: 0, standard: 1, heavy: 2, thinking: 3 };

const BOUNDS: Partial<Record<Effort, { at_most?: Tier; at_least?: Tier }>> = {
  minimal: { at_most: 'standard' },
  low: { at_most: 'standard' },
  xhigh: { at_least: 'heavy' },
  max: { at_least: 'heavy' },
};

export function boundByEffort(assessment: Assessment, effort: Effort | undefined, explicitThinking: boolean): Assessment {
  const bound = effort === undefined || explicitThinking ? undefined : BOUNDS[effort];
  if (!bound) return assessment;
  let tier = assessment.tier;
  if (bound.at_most && RANK[tier] > RANK[bound.at_most]) tier = bound.at_most;
  if (bound.at_least && RANK[tier] < RANK[bound.at_least]) tier = bound.at_least;
  if (tier === assessment.tier) return assessment;
  return { ...assessment, tier, reasons: [`effort_${effort}`, ...assessment.reasons] };
}
