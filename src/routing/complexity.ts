// Complexity assessment (DESIGN §7): scores every request from 0 to 1 and
// picks the tier that should serve it. It runs on every request before any
// upstream call, so it is plain arithmetic over a few regular expressions and
// one capped tokenizer call. No model, no I/O.
//
// The score is a sum of independent contributions, clamped to 1, so the
// `reasons` in `x-route` name exactly the parts that added weight. It is
// tuned against test/fixtures/routing-eval.json (`npm run eval:routing`).
import type { CanonicalContent, CanonicalMessage, CanonicalRequest } from '../data-plane/canonical';
import { DEFAULT_ASSESSMENT, DEFAULT_MAX_TOKENS } from './catalog';
import type { AssessmentThresholds, Tier } from './catalog.types';
import { cueCounts, type CueCounts } from './complexity-cues';
import { contentTexts, countImages } from '../data-plane/canonical-text';

export type ReasonTag =
  | 'explicit_thinking'
  | 'long'
  | 'code'
  | 'math'
  | 'reasoning'
  | 'analysis'
  | 'multi_step'
  | 'many_turns'
  | 'big_system'
  | 'large_output'
  | 'tools'
  | 'trivial';

export interface Assessment {
  tier: Tier;
  /** 0..1, two decimals. */
  score: number;
  /** Short tags (ReasonTag) naming what raised the score, most weighty first. */
  reasons: string[];
}

/** One source for the defaults: the catalog applies them when `assessment` is absent. */
export const DEFAULT_ASSESSMENT_THRESHOLDS: Readonly<AssessmentThresholds> = DEFAULT_ASSESSMENT;

/**
 * Without an explicit `thinking` request the assessor only picks the thinking
 * tier at this score AND with a strong reasoning cue (prove, derive,
 * optimality) backed by mathematics or by more reasoning wording. Thinking is the dearest tier and adds latency, so a request must
 * look unmistakably like deep reasoning; a request that is merely long and
 * busy (big code review, architecture brief) is heavy work, not deep
 * reasoning, and stays heavy however high it scores.
 */
export const AUTO_THINKING_SCORE = 0.9;

/**
 * Only this many characters are counted; the rest is extrapolated at the same
 * tokens-per-character rate, so a 100 kB paste costs no more than a 4 kB one.
 */
const ESTIMATE_CAP_CHARS = 4000;
/** Cue scanning looks at the head and tail of a huge task, where instructions live. */
const SCAN_HEAD_CHARS = 6000;
const SCAN_TAIL_CHARS = 2000;
/** What an image adds to the context, roughly, in tokens. */
const IMAGE_TOKENS = 800;
/**
 * The default `max_tokens` of forms where it is optional, and what most SDKs
 * send: asking for this much says nothing about the task, only more than this
 * does.
 */
const ORDINARY_MAX_TOKENS = DEFAULT_MAX_TOKENS;

/**
 * Score from effective prompt tokens, linear in log(tokens) between these
 * points. A few words score nothing; a long paste alone reaches heavy only
 * around 6k tokens, because a long but simple task (summarise this) does not
 * need the strongest model.
 */
const LENGTH_CURVE: ReadonlyArray<readonly [tokens: number, score: number]> = [
  [5, 0],
  [12, 0.05],
  [40, 0.12],
  [150, 0.2],
  [600, 0.3],
  [2000, 0.42],
  [6000, 0.6],
];
/**
 * Earlier turns are context to keep track of, not work to do: a late "ok, go
 * ahead" in a long chat is still small. They count at this share.
 */
const HISTORY_SHARE = 0.25;
const LONG_TOKENS = 1500;
const BIG_SYSTEM_TOKENS = 200;
const MANY_TURNS_MESSAGES = 9;
/** A last message this short with no cue at all is small talk or a lookup. */
const TRIVIAL_TASK_TOKENS = 24;

/** Weight of each cue group at full strength; strength grows with distinct cues. */
const CUE_WEIGHT = { code: 0.35, analysis: 0.35, multi_step: 0.35, math: 0.3, reasoning: 0.65 } as const;
/**
 * Reasoning reaches full weight at this many points: a strong cue (prove,
 * derive, optimality) is one, a weak one (constraints, O(n)) half, and a
 * strong cue backed by mathematics one more, since "prove" about a formula is
 * a proof while "prove" in a cover letter is not. Proofs and argued optima are
 * what the top of the score is for.
 */
const REASONING_FULL_POINTS = 2;
/**
 * Asking for output rather than a fact ("explain", "write", "写") lifts a
 * request to at least this much cue score: the light/standard boundary. It is
 * a floor, not an addition, because the code or analysis cues of the same ask
 * already measure it.
 */
const TASK_FLOOR = 0.22;

export interface ComplexityFeatures {
  /** Tokens of the task: the last user message that says something in words. */
  taskTokens: number;
  historyTokens: number;
  systemTokens: number;
  priorMessages: number;
  maxTokens: number;
  toolCount: number;
  cues: CueCounts;
}

export function assessComplexity(request: CanonicalRequest, thresholds: AssessmentThresholds): Assessment {
  const features = measureComplexity(request);
  const parts = contributions(features);
  const raw = parts.reduce((sum, [, value]) => sum + value, 0);
  const score = Math.round(Math.min(1, raw) * 100) / 100;

  const { cues } = features;
  const reasons = namedReasons(parts);
  const cued = cues.code + cues.math + cues.reasoning + cues.weakReasoning + cues.analysis + cues.multi_step + cues.task > 0;
  if (!cued && features.taskTokens < TRIVIAL_TASK_TOKENS && features.toolCount === 0 && score < thresholds.standard) reasons.push('trivial');

  // `enabled` asks for deep reasoning; `adaptive` (or no setting) leaves the
  // tier to the assessment; `disabled` never thinks.
  const setting = request.thinking?.type;
  if (setting === 'enabled') return { tier: 'thinking', score, reasons: ['explicit_thinking', ...reasons] };
  // Auto-thinking also needs a clear proof or optimum to argue: one strong
  // reasoning cue backed by mathematics or by more reasoning wording.
  const deep = setting !== 'disabled' && cues.reasoning >= 1 && reasoningPoints(cues) >= 1.5;
  return { tier: pickTier(score, thresholds, deep), score, reasons };
}

/** What the score is computed from; exported for the evaluation script's diagnostics. */
export function measureComplexity(request: CanonicalRequest): ComplexityFeatures {
  const { task, taskImages, history, historyImages } = splitConversation(request.messages);
  return {
    taskTokens: estimateTokens(task) + taskImages * IMAGE_TOKENS,
    historyTokens: estimateTokens(history) + historyImages * IMAGE_TOKENS,
    systemTokens: request.system === undefined ? 0 : estimateTokens(request.system),
    priorMessages: Math.max(0, request.messages.length - 1),
    maxTokens: request.maxTokens,
    toolCount: request.tools?.length ?? 0,
    cues: cueCounts(scanWindow(task)),
  };
}

/** Each part of the score with the tag it is reported under (null: not worth naming). */
function contributions(f: ComplexityFeatures): Array<[ReasonTag | null, number]> {
  const parts: Array<[ReasonTag | null, number]> = [];
  const add = (tag: ReasonTag | null, value: number): void => {
    if (value > 0) parts.push([tag, value]);
  };
  const effectiveTokens = f.taskTokens + f.historyTokens * HISTORY_SHARE;
  add(effectiveTokens >= LONG_TOKENS ? 'long' : null, lengthScore(effectiveTokens));
  const cueStart = parts.length;
  add('code', CUE_WEIGHT.code * saturate(f.cues.code));
  add('analysis', CUE_WEIGHT.analysis * saturate(f.cues.analysis));
  add('multi_step', CUE_WEIGHT.multi_step * saturate(f.cues.multi_step));
  add('math', CUE_WEIGHT.math * saturate(f.cues.math));
  add('reasoning', CUE_WEIGHT.reasoning * Math.min(1, reasoningPoints(f.cues) / REASONING_FULL_POINTS));
  const cueScore = parts.slice(cueStart).reduce((sum, [, value]) => sum + value, 0);
  add(null, f.cues.task > 0 ? TASK_FLOOR - cueScore : 0);
  add(f.priorMessages + 1 >= MANY_TURNS_MESSAGES ? 'many_turns' : null, Math.min(0.08, f.priorMessages / 100));
  add('big_system', f.systemTokens >= BIG_SYSTEM_TOKENS ? Math.min(0.12, 0.06 + f.systemTokens / 10_000) : 0);
  add('large_output', f.maxTokens > ORDINARY_MAX_TOKENS ? (f.maxTokens >= 8000 ? 0.15 : 0.08) : 0);
  add('tools', f.toolCount > 0 ? 0.05 + Math.min(0.05, f.toolCount / 200) : 0);
  return parts;
}

function reasoningPoints(cues: CueCounts): number {
  const backedByMath = cues.reasoning > 0 && cues.math > 0 ? 1 : 0;
  return cues.reasoning + cues.weakReasoning / 2 + backedByMath;
}

function pickTier(score: number, thresholds: AssessmentThresholds, reasoningCued: boolean): Tier {
  if (score < thresholds.standard) return 'light';
  if (score < thresholds.heavy) return 'standard';
  if (score >= AUTO_THINKING_SCORE && reasoningCued) return 'thinking';
  return 'heavy';
}

/** Tags in order of contribution, each once. */
function namedReasons(parts: ReadonlyArray<[ReasonTag | null, number]>): string[] {
  const byTag = new Map<ReasonTag, number>();
  for (const [tag, value] of parts) if (tag !== null) byTag.set(tag, (byTag.get(tag) ?? 0) + value);
  return [...byTag.entries()].sort((a, b) => b[1] - a[1]).map(([tag]) => tag);
}

/**
 * The task is the last user message that says something in words; in a tool
 * loop the latest user message is only tool results, and the task is still
 * what the user last asked. Everything else is context.
 */
function splitConversation(messages: readonly CanonicalMessage[]): {
  task: string;
  taskImages: number;
  history: string;
  historyImages: number;
} {
  let taskIndex = -1;
  for (let i = messages.length - 1; i >= 0 && taskIndex < 0; i -= 1) {
    const message = messages[i];
    if (message?.role === 'user' && message.content.some((block) => block.type === 'text' && block.text.trim() !== '')) taskIndex = i;
  }
  const history: string[] = [];
  let task = '';
  let taskImages = 0;
  let historyImages = 0;
  messages.forEach((message, index) => {
    const { text, images } = flatten(message.content);
    if (index === taskIndex) {
      task = text;
      taskImages = images;
    } else {
      history.push(text);
      historyImages += images;
    }
  });
  return { task, taskImages, history: history.join('\n'), historyImages };
}

function flatten(content: readonly CanonicalContent[]): { text: string; images: number } {
  const pieces = contentTexts(content);
  for (const block of content) {
    if (block.type === 'tool_use') pieces.push(JSON.stringify(block.input) ?? '');
    else if (block.type === 'thinking') pieces.push(block.thinking);
  }
  return { text: pieces.join('\n'), images: countImages(content) };
}

/**
 * Prompt tokens estimated from character classes instead of a tokenizer: the
 * o200k vocabulary costs about 60 MB of memory and 40–70 µs a call, and the
 * length score is logarithmic, so ±30% moves it by a few hundredths. Against
 * o200k on the routing evaluation set the estimate is within 0.8–1.3× for
 * 90% of prompts (median 1.0): a Latin word is about one token per 7 letters,
 * a digit run one per 3 digits, a CJK character 0.7, other symbols one each.
 */
export function estimateTokens(text: string): number {
  const end = Math.min(text.length, ESTIMATE_CAP_CHARS);
  let tokens = 0;
  // One pass over character codes, no match objects: it runs on every request.
  // Runs: Latin words, digit runs, single CJK characters, whitespace runs, any other single character.
  for (let i = 0; i < end; ) {
    const code = text.charCodeAt(i);
    let run = 1;
    if (isLatinLetter(code)) {
      while (i + run < end && isLatinLetter(text.charCodeAt(i + run))) run += 1;
      tokens += Math.ceil(run / 7);
    } else if (isDigit(code)) {
      while (i + run < end && isDigit(text.charCodeAt(i + run))) run += 1;
      tokens += Math.ceil(run / 3);
    } else if (isCjk(code)) {
      tokens += 0.7;
    } else {
      if (isSpace(code)) while (i + run < end && isSpace(text.charCodeAt(i + run))) run += 1;
      // A run is weighed by its first character: ASCII blanks are free unless several, other symbols about one token each.
      if (code <= 32) tokens += run > 1 ? 1 : 0;
      else if (code >= 0x3040) tokens += 0.7;
      else tokens += 1;
    }
    i += run;
  }
  return Math.round(end === text.length ? tokens : (tokens * text.length) / end);
}

const isLatinLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
const isDigit = (code: number): boolean => code >= 48 && code <= 57;
const isCjk = (code: number): boolean =>
  (code >= 0x3040 && code <= 0x30ff) || (code >= 0x3400 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) || (code >= 0xf900 && code <= 0xfaff);
/** What `\s` matches. */
const isSpace = (code: number): boolean =>
  code === 32 ||
  (code >= 9 && code <= 13) ||
  code === 0xa0 ||
  code === 0x1680 ||
  (code >= 0x2000 && code <= 0x200a) ||
  code === 0x2028 ||
  code === 0x2029 ||
  code === 0x202f ||
  code === 0x205f ||
  code === 0x3000 ||
  code === 0xfeff;

function scanWindow(text: string): string {
  if (text.length <= SCAN_HEAD_CHARS + SCAN_TAIL_CHARS) return text;
  return `${text.slice(0, SCAN_HEAD_CHARS)}\n${text.slice(-SCAN_TAIL_CHARS)}`;
}

/** 1 cue → 0.5, 2 → 0.75, 3 → 0.875: more distinct cues, more confidence, never past 1. */
function saturate(hits: number): number {
  return hits <= 0 ? 0 : 1 - 0.5 ** hits;
}

function lengthScore(tokens: number): number {
  const first = LENGTH_CURVE[0];
  const last = LENGTH_CURVE[LENGTH_CURVE.length - 1];
  if (first === undefined || last === undefined || tokens <= first[0]) return 0;
  if (tokens >= last[0]) return last[1];
  for (let i = 1; i < LENGTH_CURVE.length; i += 1) {
    const lower = LENGTH_CURVE[i - 1];
    const upper = LENGTH_CURVE[i];
    if (lower === undefined || upper === undefined || tokens > upper[0]) continue;
    const t = Math.log(tokens / lower[0]) / Math.log(upper[0] / lower[0]);
    return lower[1] + t * (upper[1] - lower[1]);
  }
  return last[1];
}
