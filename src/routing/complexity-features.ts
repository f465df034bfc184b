// What the complexity assessor reads from a request (docs/architecture.md §5): a few dozen
// named features (lengths, turns, the cue groups of complexity-cues.ts) and
// hashed character n-grams of the ask. The weights that turn them into a tier
// are learned (routing-model.ts, scripts/train-routing.ts); this file only
// measures, in one pass over bounded windows of text, so it costs the same
// for a 200 kB agent turn as for "hi".
//
// Agent turns (docs/architecture.md §5): the tier follows the latest ask and the
// conversation's difficulty, not the harness around it. The constants a
// harness sends with every turn are not measured at all: `max_tokens`, the
// tool definitions, the system prompt, the thinking setting. What it wraps
// around the ask (system reminders, AGENTS.md and environment blocks, system
// turns) is not words (complexity-conversation.ts). The tool loop counts by
// its state: whether the turn is a tool result, the rounds since the ask, and
// whether the last tool failed.
import type { CanonicalRequest } from '../core/canonical';
import { scanCues } from './complexity-cues';
import { readConversation } from './complexity-conversation';
import { CUE_GROUPS } from './complexity-lexicon';
import { codeLines } from './complexity-shape';
import { estimateTokens } from './token-estimate';

/** The named features, in the order of the model's dense weights. */
export const FEATURE_NAMES = [
  'ask_length',
  'ask_short',
  'task_length',
  'paste',
  'long',
  'history',
  'turns',
  ...CUE_GROUPS,
  'code_shape',
  'code_in_paste',
  'list',
  'numbers',
  'questions',
  'reasoning_with_math',
  'constraints_with_data',
  'closed_question',
  'quoted',
  'no_cue',
  'tool_loop',
  'tool_rounds',
  'tool_failed',
  'system',
  'images',
] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** Hashed n-gram buckets: a power of two. */
export const GRAM_BUCKETS = 4096;

/** The ask is read for n-grams up to this many characters (head), plus a short tail. */
const ASK_HEAD_CHARS = 120;
const ASK_TAIL_CHARS = 40;
/** Cue words are looked for in the ask's head and tail: a long ask states its demands there too. */
const CUE_HEAD_CHARS = 300;
const CUE_TAIL_CHARS = 100;
/** A paste is only looked at for the shape of code, in its first characters. */
const PASTE_SHAPE_CHARS = 1000;
/** A last paragraph this short, after a paste, is part of the ask ("…\n\nWhat does this mean?"). */
const TAIL_ASK_CHARS = 300;
/** Lengths are estimated from this many characters and extrapolated: the features are logarithmic in length. */
const ESTIMATE_CHARS = 160;
const LONG_TOKENS = 1500;
/** An ask this short after an earlier ask, with a go-ahead cue, carries the earlier ask's work on. */
const FOLLOW_UP_TOKENS = 12;
const PASTE_TOKENS = 300;
const IMAGE_TOKENS = 800;
/** A quoted term ('accrual', “对账单”) this short marks a phrase asked about. */
const QUOTED_CHARS = 40;
/** An ask this short that asks yes or no, or about a quoted term, is a closed ask. */
const CLOSED_TOKENS = 40;

export interface Features {
  /** Values of FEATURE_NAMES, same order. */
  dense: Float64Array;
  /** Bucket index of each n-gram of the ask (repeats allowed). */
  grams: Uint16Array;
  gramCount: number;
  /** Each n-gram's value: 1/√count, so a long ask weighs no more than a short one in total. */
  gramValue: number;
  /** For the `trivial` tag: a short ask with no cue at all. */
  trivial: boolean;
  /**
   * A follow-up that approves or continues the earlier ask ("yes, go ahead",
   * "继续"): the number of messages up to and including that ask, which is
   * assessed in its place; 0 otherwise.
   */
  carriesOnUpTo: number;
}

/**
 * Scratch arrays the features are measured into, reused from call to call:
 * allocating typed arrays per request costs more than the arithmetic (their
 * memory lives outside the heap and wakes the collector). A result is valid
 * until the next call; `copyFeatures` keeps one.
 */
const DENSE = new Float64Array(FEATURE_NAMES.length);
let GRAMS = new Uint16Array(2 * 1024);

export function copyFeatures(features: Features): Features {
  return { ...features, dense: features.dense.slice(), grams: features.grams.slice(0, features.gramCount) };
}

export function extractFeatures(request: CanonicalRequest): Features {
  const conversation = readConversation(request.messages);
  const task = conversation.task;
  const ask = askOf(task);
  const askTokens = estimateTokens(ask, ESTIMATE_CHARS);
  const taskTokens = (ask.length === task.length ? askTokens : estimateTokens(task, ESTIMATE_CHARS)) + conversation.taskImages * IMAGE_TOKENS;
  const historyTokens = conversation.historyChars === 0 ? 0 : (estimateTokens(conversation.historySample) * conversation.historyChars) / conversation.historySample.length;
  const cues = scanCues(window(ask, CUE_HEAD_CHARS, CUE_TAIL_CHARS));
  const groups = cues.groups;
  let substantive = false;
  for (let g = 0; g < GROUP_COUNT; g += 1) if ((groups[g] ?? 0) > 0 && !NOT_SUBSTANTIVE[g]) substantive = true;
  const tools = request.tools?.length ?? 0;
  const systemTokens = request.system === undefined || tools > 0 ? 0 : estimateTokens(request.system, ESTIMATE_CHARS);

  const dense = DENSE;
  dense.fill(0);
  dense[I.ask_length] = Math.min(1, Math.log1p(askTokens) / 7);
  dense[I.ask_short] = askTokens <= 8 ? 1 : 0;
  dense[I.task_length] = Math.min(1, Math.log1p(taskTokens) / 9);
  dense[I.paste] = taskTokens - askTokens >= PASTE_TOKENS ? 1 : 0;
  dense[I.long] = taskTokens + historyTokens / 4 >= LONG_TOKENS ? 1 : 0;
  dense[I.history] = Math.min(1, Math.log1p(historyTokens) / 9);
  dense[I.turns] = Math.min(1, conversation.userTurns / 8);
  // The cue groups sit at the same positions in FEATURE_NAMES, right after the length features.
  for (let g = 0; g < GROUP_COUNT; g += 1) dense[FIRST_CUE + g] = saturate(groups[g] ?? 0);
  dense[I.code_shape] = cues.code / 4;
  dense[I.code_in_paste] = task.length === ask.length ? 0 : saturate(pastedCode(task));
  dense[I.list] = cues.list / 4;
  dense[I.numbers] = Math.min(1, Math.log1p(cues.numbers) / Math.log1p(16));
  dense[I.questions] = Math.min(3, cues.questions) / 3;
  const math = (groups[MATH] ?? 0) > 0;
  const data = cues.numbers >= 4;
  dense[I.reasoning_with_math] = ((groups[REASONING] ?? 0) > 0 || (groups[OPTIMISE] ?? 0) > 0) && (math || data) ? 1 : 0;
  dense[I.constraints_with_data] = (groups[CONSTRAINTS] ?? 0) > 0 && data ? 1 : 0;
  // In an agent session a change request, however terse ("lint fails, fix it"), is a change to code.
  dense[I.closed_question] = askTokens <= CLOSED_TOKENS && closedQuestion(ask) ? 1 : 0;
  dense[I.quoted] = askTokens <= CLOSED_TOKENS && quotedTerm(ask) ? 1 : 0;
  dense[I.no_cue] = substantive ? 0 : 1;
  dense[I.tool_loop] = conversation.toolLoop ? 1 : 0;
  dense[I.tool_rounds] = Math.min(1, Math.log1p(conversation.toolRounds) / Math.log1p(10));
  dense[I.tool_failed] = conversation.toolLoop && conversation.toolFailed ? 1 : 0;
  dense[I.system] = tools === 0 && systemTokens > 0 ? Math.min(1, Math.log1p(systemTokens) / 8) : 0;
  dense[I.images] = Math.min(1, conversation.taskImages / 3);

  const grams = hashGrams(window(ask, ASK_HEAD_CHARS, ASK_TAIL_CHARS));
  return {
    dense,
    grams: grams.buckets,
    gramCount: grams.count,
    gramValue: grams.count === 0 ? 0 : 1 / Math.sqrt(grams.count),
    trivial: !substantive && askTokens < 24,
    carriesOnUpTo: conversation.previousIndex >= 0 && askTokens <= FOLLOW_UP_TOKENS && (groups[PROCEED] ?? 0) > 0 ? conversation.previousIndex + 1 : 0,
  };
}

const FEATURE_INDEX = Object.fromEntries(FEATURE_NAMES.map((name, index) => [name, index])) as Record<FeatureName, number>;
const FIRST_CUE = FEATURE_INDEX[CUE_GROUPS[0]];
const GROUP_COUNT = CUE_GROUPS.length;

/** Feature positions by name, read as constant property names on the hot path. */
const I = FEATURE_INDEX;
const MATH = CUE_GROUPS.indexOf('math');
const REASONING = CUE_GROUPS.indexOf('reasoning');
const OPTIMISE = CUE_GROUPS.indexOf('optimise');
const CONSTRAINTS = CUE_GROUPS.indexOf('constraints');
const PROCEED = CUE_GROUPS.indexOf('proceed');
/** Groups that say an ask is a greeting, a lookup, a phrase, a short piece of writing or a go-ahead: with only these, an ask has no cue of work. */
const NOT_SUBSTANTIVE = CUE_GROUPS.map((name) => name === 'chat' || name === 'lookup' || name === 'phrase' || name === 'artefact' || name === 'proceed');

/** English words that open a yes-or-no question. */
const YES_NO = new Set(['does', 'do', 'is', 'are', 'can', 'could', 'will', 'would', 'should', 'has', 'have', 'did', 'was', 'were', "isn't", "doesn't", "won't", "can't", 'am']);
/** Chinese markers of a yes-or-no question. */
const ZH_YES_NO = ['吗', '是否', '是不是', '能不能', '有没有', '可不可以', '会不会', '支不支持', '对不对', '行不行'];

/**
 * A yes-or-no question: in English its last sentence opens with an auxiliary
 * ("thx. does COALESCE work in MySQL too?"), in Chinese it asks 吗 or 是否.
 */
function closedQuestion(ask: string): boolean {
  const end = ask.length;
  let start = Math.max(ask.lastIndexOf('. ', end - 2), ask.lastIndexOf('\n', end - 2), ask.lastIndexOf('! ', end - 2));
  start = start < 0 ? 0 : start + 1;
  while (start < end && ask.charCodeAt(start) <= 32) start += 1;
  let wordEnd = start;
  while (wordEnd < end && ask.charCodeAt(wordEnd) > 32 && ask.charCodeAt(wordEnd) < 128) wordEnd += 1;
  if (wordEnd > start && YES_NO.has(ask.slice(start, wordEnd).toLowerCase())) return true;
  for (const marker of ZH_YES_NO) if (ask.includes(marker)) return true;
  return false;
}

const QUOTES: ReadonlyArray<readonly [open: number, close: number]> = [
  [0x27, 0x27], // '…'
  [0x22, 0x22], // "…"
  [0x2018, 0x2019], // ‘…’
  [0x201c, 0x201d], // “…”
  [0x300c, 0x300d], // 「…」
  [0x300e, 0x300f], // 『…』
];

/**
 * A short quoted term in the ask: "how do you say 'accrual'", 把“对账单”翻成英文,
 * or a short phrase after a colon that ends the ask (翻译：早上好). An apostrophe
 * inside a word (don't) opens nothing.
 */
function quotedTerm(ask: string): boolean {
  const text = ask.trimEnd();
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0xff1a || code === 0x3a) {
      const rest = text.length - i - 1;
      if (rest > 0 && rest <= QUOTED_CHARS && !text.includes('\n', i)) return true;
      continue;
    }
    const quote = QUOTES.find(([open]) => open === code);
    if (!quote) continue;
    if (code === 0x27 && i > 0 && isAsciiWord(text.charCodeAt(i - 1))) continue;
    const close = text.indexOf(String.fromCharCode(quote[1]), i + 1);
    if (close > i + 1 && close - i - 1 <= QUOTED_CHARS && !text.slice(i + 1, close).includes('\n')) return true;
  }
  return false;
}

const isAsciiWord = (code: number): boolean => (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57);

/**
 * The instruction in a task: its first paragraph, plus a short last paragraph
 * after a paste ("…\n\nWhat does this clause mean?"). The rest is material.
 */
function askOf(task: string): string {
  const trimmed = task.trim();
  const firstBreak = trimmed.indexOf('\n\n');
  if (firstBreak < 0) return trimmed;
  const head = trimmed.slice(0, firstBreak);
  const lastBreak = trimmed.lastIndexOf('\n\n');
  const tail = trimmed.slice(lastBreak + 2);
  if (lastBreak <= firstBreak || tail.length > TAIL_ASK_CHARS) return head;
  // A last paragraph inside an open code fence is code, not an ask.
  let fences = 0;
  for (let at = trimmed.indexOf('```'); at >= 0 && at < lastBreak; at = trimmed.indexOf('```', at + 3)) fences += 1;
  return fences % 2 === 0 ? `${head}\n${tail}` : head;
}

function window(text: string, head: number, tail: number): string {
  if (text.length <= head + tail) return text;
  return `${text.slice(0, head)}\n${text.slice(-tail)}`;
}

/**
 * Code in a paste, by shape and without regular expressions (pastes are long):
 * a fenced block, and lines that end like statements or blocks.
 */
function pastedCode(task: string): number {
  let fences = 0;
  for (let at = task.indexOf('```'); at >= 0 && fences < 2; at = task.indexOf('```', at + 3)) fences += 1;
  const lines = codeLines(task, PASTE_SHAPE_CHARS);
  return (fences >= 2 ? 2 : 0) + (lines >= 3 ? 1 : 0) + (lines >= 15 ? 1 : 0);
}

/** 1 cue → 0.5, 2 → 0.75, 3 → 0.875: more distinct cues, more confidence, never past 1. */
function saturate(hits: number): number {
  return hits <= 0 ? 0 : 1 - 0.5 ** hits;
}

/**
 * Character bigrams and trigrams of the ask, lower-cased, digits folded to 0
 * and blank runs to one space, each hashed (FNV-1a) into GRAM_BUCKETS. Chinese
 * has no spaces, so character n-grams are its words; in English they catch
 * stems ("prov", "optim") whatever the inflection.
 */
function hashGrams(text: string): { buckets: Uint16Array; count: number } {
  if (GRAMS.length < 2 * text.length) GRAMS = new Uint16Array(2 * text.length);
  const buckets = GRAMS;
  const mask = GRAM_BUCKETS - 1;
  let count = 0;
  // The two characters before the current one, after folding; -1: none yet.
  let first = -1;
  let second = -1;
  let blank = true;
  for (let i = 0; i < text.length; i += 1) {
    let code = text.charCodeAt(i);
    if (code <= 32 || code === 0xa0 || code === 0x3000) {
      if (blank) continue;
      blank = true;
      code = 32;
    } else {
      blank = false;
      if (code >= 65 && code <= 90) code += 32;
      else if (code >= 48 && code <= 57) code = 48;
    }
    if (second >= 0) {
      const h = Math.imul(Math.imul(0x811c9dc5 ^ second, 0x01000193) ^ code, 0x01000193);
      buckets[count] = (h >>> 0) & mask;
      count += 1;
      if (first >= 0) {
        const t = Math.imul(Math.imul(Math.imul(0x811c9dc5 ^ first, 0x01000193) ^ second, 0x01000193) ^ code, 0x01000193);
        buckets[count] = (Math.imul(t ^ 0x9e37, 0x01000193) >>> 0) & mask;
        count += 1;
      }
    }
    first = second;
    second = code;
  }
  return { buckets, count };
}
