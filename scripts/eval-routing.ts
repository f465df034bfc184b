// Measures the complexity assessor against the hand-labelled set in
// test/fixtures/routing-eval.json: `npm run eval:routing` prints accuracy
// overall and per language and the confusion matrix; `--verbose` also lists
// every miss with its score and reasons, which is what you read when tuning;
// `--bench` times one assessment of a short prompt and of 20 kB ones.
// The unit tests import `evaluateRouting` so a regression fails CI.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CanonicalMessage, CanonicalRequest } from '../src/data-plane/canonical';
import { DEFAULT_MAX_TOKENS } from '../src/routing/catalog';
import { TIERS, type AssessmentThresholds, type Tier } from '../src/routing/catalog.types';
import { DEFAULT_ASSESSMENT_THRESHOLDS, assessComplexity, measureComplexity, type Assessment } from '../src/routing/complexity';

export interface RoutingEvalItem {
  id: string;
  lang: 'zh' | 'en';
  prompt: string;
  system?: string;
  /** Prior exchanges (one user message + one assistant reply each) to put before the prompt. */
  turns?: number;
  max_tokens?: number;
  thinking?: true;
  expected: Tier;
}

export interface RoutingEvalResult {
  /** Share of items whose predicted tier equals the label, 0..1. */
  accuracy: number;
  byLang: Record<'zh' | 'en', { accuracy: number; count: number }>;
  /** matrix[expected][predicted] = item count. */
  matrix: Record<Tier, Record<Tier, number>>;
  misses: Array<{ item: RoutingEvalItem; assessment: Assessment }>;
}

export const ROUTING_EVAL_PATH = fileURLToPath(new URL('../test/fixtures/routing-eval.json', import.meta.url));

export function loadRoutingEval(path: string = ROUTING_EVAL_PATH): RoutingEvalItem[] {
  return JSON.parse(readFileSync(path, 'utf8')) as RoutingEvalItem[];
}

// Filler for synthesised history: ordinary chat that carries length but no
// cue of its own, so an item's label depends on its prompt and not on filler.
const FILLER: Record<'zh' | 'en', ReadonlyArray<readonly [user: string, assistant: string]>> = {
  en: [
    ['Thanks, that makes sense. Can you say a bit more about the second point?', 'Sure. The second point mostly matters when the situation changes over time. In practice people handle it by checking in regularly and adjusting as they go, rather than fixing everything up front.'],
    ['Okay. And what about the timing, is earlier better?', 'Usually, yes. Starting earlier gives you more room to react if something goes wrong, although it is not a hard rule and it depends on how much flexibility you have.'],
    ['Got it. Let me note that down.', 'Good idea. Let me know when you are ready to continue or if anything in the notes is unclear.'],
    ['One more thing I forgot to mention: the budget is a little tighter than I said.', 'Thanks for telling me. That does not change the overall direction, but we may want to leave out a couple of the optional parts and keep a small reserve.'],
    ['Right, that sounds reasonable to me.', 'Great. Then we can keep the rest as it is and only adjust the details when you have more information.'],
  ],
  zh: [
    ['明白了，谢谢。第二点能再说详细一点吗？', '当然可以。第二点主要在情况发生变化的时候比较重要。实际中大家一般会定期看一下进展，再根据情况调整，而不是一开始就全部定死。'],
    ['好的。那时间上是越早越好吗？', '一般来说是的。早一点开始，遇到问题的时候回旋的余地更大，不过这也不是绝对的，要看你那边的时间安排有多灵活。'],
    ['收到，我先记一下。', '好的。记完了随时告诉我，有哪里不清楚的也可以再问。'],
    ['还有一件事忘了说，预算比我之前说的要紧一些。', '谢谢提醒。整体方向不用变，只是可能要去掉一两个可选的部分，再留一点余量。'],
    ['嗯，我觉得这样挺合理的。', '太好了。那其他部分先保持不变，等你有了更多信息我们再调整细节。'],
  ],
};

export function toRequest(item: RoutingEvalItem): CanonicalRequest {
  const messages: CanonicalMessage[] = [];
  const filler = FILLER[item.lang];
  for (let i = 0; i < (item.turns ?? 0); i += 1) {
    const pair = filler[i % filler.length];
    if (pair === undefined) continue;
    messages.push({ role: 'user', content: [{ type: 'text', text: pair[0] }] });
    messages.push({ role: 'assistant', content: [{ type: 'text', text: pair[1] }] });
  }
  messages.push({ role: 'user', content: [{ type: 'text', text: item.prompt }] });
  return {
    model: 'eval',
    ...(item.system === undefined ? {} : { system: item.system }),
    messages,
    maxTokens: item.max_tokens ?? DEFAULT_MAX_TOKENS,
    stream: false,
    ...(item.thinking === true ? { thinking: { type: 'enabled' as const } } : {}),
  };
}

function emptyRow(): Record<Tier, number> {
  return { light: 0, standard: 0, heavy: 0, thinking: 0 };
}

export function evaluateRouting(
  items: readonly RoutingEvalItem[],
  thresholds: AssessmentThresholds = DEFAULT_ASSESSMENT_THRESHOLDS,
): RoutingEvalResult {
  const matrix: Record<Tier, Record<Tier, number>> = { light: emptyRow(), standard: emptyRow(), heavy: emptyRow(), thinking: emptyRow() };
  const tally = { zh: { hit: 0, count: 0 }, en: { hit: 0, count: 0 } };
  const misses: RoutingEvalResult['misses'] = [];
  for (const item of items) {
    const assessment = assessComplexity(toRequest(item), thresholds);
    matrix[item.expected][assessment.tier] += 1;
    tally[item.lang].count += 1;
    if (assessment.tier === item.expected) tally[item.lang].hit += 1;
    else misses.push({ item, assessment });
  }
  const share = (hit: number, count: number): number => (count === 0 ? 0 : hit / count);
  return {
    accuracy: share(tally.zh.hit + tally.en.hit, items.length),
    byLang: {
      zh: { accuracy: share(tally.zh.hit, tally.zh.count), count: tally.zh.count },
      en: { accuracy: share(tally.en.hit, tally.en.count), count: tally.en.count },
    },
    matrix,
    misses,
  };
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

function report(result: RoutingEvalResult, total: number, verbose: boolean): string {
  const lines = [
    `items: ${total}`,
    `accuracy: ${percent(result.accuracy)}`,
    `  zh: ${percent(result.byLang.zh.accuracy)} (${result.byLang.zh.count})`,
    `  en: ${percent(result.byLang.en.accuracy)} (${result.byLang.en.count})`,
    '',
    'confusion matrix (rows expected, columns predicted):',
    `${'expected'.padEnd(10)}${TIERS.map((tier) => tier.padStart(10)).join('')}`,
    ...TIERS.map((expected) => `${expected.padEnd(10)}${TIERS.map((predicted) => String(result.matrix[expected][predicted]).padStart(10)).join('')}`),
  ];
  if (verbose) {
    lines.push('', 'misses:');
    for (const { item, assessment } of result.misses) {
      const { taskTokens, cues } = measureComplexity(toRequest(item));
      const counts = Object.entries(cues).filter(([, count]) => count > 0).map(([cue, count]) => `${cue}=${count}`);
      const preview = item.prompt.replace(/\s+/g, ' ').slice(0, 60);
      lines.push(
        `  ${item.id.padEnd(16)} ${item.expected.padEnd(8)} -> ${assessment.tier.padEnd(8)} ${assessment.score.toFixed(2)} [${assessment.reasons.join(',')}]`,
        `    ${taskTokens} tokens; cues ${counts.join(' ') || 'none'}; ${preview}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Mean µs per assessment, after a warm-up that lets the JIT and the tokenizer's caches settle. */
function microsPerCall(request: CanonicalRequest, iterations: number): number {
  for (let i = 0; i < 200; i += 1) assessComplexity(request, DEFAULT_ASSESSMENT_THRESHOLDS);
  const start = performance.now();
  for (let i = 0; i < iterations; i += 1) assessComplexity(request, DEFAULT_ASSESSMENT_THRESHOLDS);
  return ((performance.now() - start) * 1000) / iterations;
}

function bench(items: readonly RoutingEvalItem[]): string {
  const byId = (id: string): RoutingEvalItem => {
    const item = items.find((candidate) => candidate.id === id);
    if (item === undefined) throw new Error(`bench needs eval item ${id}`);
    return item;
  };
  const grow = (item: RoutingEvalItem, chars: number): RoutingEvalItem => ({
    ...item,
    prompt: item.prompt.repeat(Math.ceil(chars / item.prompt.length)).slice(0, chars),
  });
  const cases: Array<[string, RoutingEvalItem, number]> = [
    ['short (en, "what\'s 2+2")', byId('light-en-02'), 20_000],
    ['short (zh, 18 chars)', byId('light-zh-07'), 20_000],
    ['20 kB (en code review)', grow(byId('heavy-en-01'), 20_000), 1_000],
    ['20 kB (zh contract, 20k chars)', grow(byId('heavy-zh-06'), 20_000), 1_000],
  ];
  return `${cases.map(([name, item, iterations]) => `${name.padEnd(32)} ${microsPerCall(toRequest(item), iterations).toFixed(1)} µs/call`).join('\n')}\n`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const items = loadRoutingEval();
  process.stdout.write(report(evaluateRouting(items), items.length, process.argv.includes('--verbose')));
  if (process.argv.includes('--bench')) process.stdout.write(`\n${bench(items)}`);
}
