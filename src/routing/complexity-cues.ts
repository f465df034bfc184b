// What a task's text says about the work it asks for: wording and notation in
// English and Chinese, and the shape of pasted code and requirement lists.
// Kept apart from the scorer (complexity.ts) so the lists can grow without
// touching the arithmetic. Each entry is one *distinct* cue: the scorer counts
// how many different cues of a group appear, not how often one repeats, so a
// long paste that says "compare" forty times weighs no more than one that says
// it once.
//
// English cues use word boundaries; Chinese has no spaces, so Chinese cues are
// plain substrings chosen to be specific enough on their own.

interface CueGroup {
  readonly en: readonly RegExp[];
  /** Chinese cue words holding a Han character: text without one cannot contain them. */
  readonly han: readonly string[];
  /** The other Chinese-list words (e.g. `SQL`), searched in any text. */
  readonly other: readonly string[];
}

const HAN = /[\u3400-\u9fff]/;

/** A group with its Chinese words split once, at load, by whether they hold a Han character. */
function cueGroup({ en, zh }: { en: readonly RegExp[]; zh: readonly string[] }): CueGroup {
  return { en, han: zh.filter((word) => HAN.test(word)), other: zh.filter((word) => !HAN.test(word)) };
}

/**
 * Asking for a proof, a derivation, an argued optimum or a solved puzzle:
 * work that needs deep reasoning rather than knowledge or breadth.
 */
const REASONING_CUES = cueGroup({
  en: [
    /\bprov(?:e|es|ing)\b|\bproofs?\b/i,
    /\bdisprove\b|\bcounter-?examples?\b/i,
    /\brigorous(?:ly)?\b|\bjustify every\b/i,
    /\bderiv(?:e|ation)\b/i,
    /\b(?:is|its|be|it's) optimal\b|\boptimality\b|\bno shorter\b|\bminimality\b|\bonly consistent\b/i,
    /\bcorrectness\b|\blinearizab(?:le|ility)\b|\binvariants?\b/i,
    /\bknights?\b.{0,80}\bknaves?\b|\bpuzzle\b/is,
    /\b(?:find|determine) all (?:functions|positive integers|integers|real|pairs|solutions)\b/i,
  ],
  zh: ['证明', '求证', '推导', '反例', '正确性', '推理题', '逻辑推理', '推理过程', '论证'],
});

/**
 * Optimisation and algorithmic wording. Ordinary briefs use these too ("the
 * constraints are…", "minimise downtime"), so they count half a reasoning cue.
 */
const WEAK_REASONING_CUES = cueGroup({
  en: [
    /\b(?:maximi[sz]|minimi[sz])(?:e|es|ing)\b/i,
    /\bsubject to\b|\bconstraints?\b/i,
    /\bO\((?:n|log|m|k|V|E)[^)]{0,14}\)|\b(?:linear|polynomial|logarithmic) time\b/,
    /\bdynamic programming\b|\bNP-(?:hard|complete)\b|\binteger (?:linear )?program/i,
    /\bif and only if\b|\bprobability\b/i,
  ],
  zh: ['最优', '最大化', '最小化', '约束', '复杂度', '动态规划', '唯一', '严格'],
});

/** Mathematical content: notation, formulas and vocabulary. */
const MATH_CUES = cueGroup({
  en: [
    /\\(?:frac|int|sum|prod|sqrt|lim|ge|le|geq|leq|infty|cdot|alpha|beta|mathbb)\b/,
    /\$[^$\n]{1,200}\$/,
    /[∫∑∏√≤≥≠≈∞ℝℕℤ∀∃∈⊂]/u,
    /\b[a-z]\s*\^\s*[\d(a-z]|\b[a-z]²|³/i,
    /\b[fgh]\s*\(\s*[a-z]\s*(?:[+\-*]\s*[a-z0-9]+\s*)?\)\s*=/i,
    /\b(?:theorems?|lemmas?|integrals?|derivatives?|equations?|inequalit(?:y|ies)|polynomials?|recurrences?|closed form|divisible|primes?|irrational|colou?rable)\b/i,
  ],
  zh: ['积分', '导数', '微分', '方程', '不等式', '定理', '素数', '无理数', '概率', '级数', '函数方程', '多项式', '整除', '实根', '数学模型', '连续'],
});

/** Code to read or write. Fenced blocks and code-shaped lines are counted separately. */
const CODE_CUES = cueGroup({
  en: [
    /\b(?:function|method|class|script|regex|regular expression|query|sql|api|endpoint)\b/i,
    /\b(?:code|codebase|implement(?:ation)?|refactor|debug|bug|compile|unit tests?|stack trace)\b/i,
    /\b(?:python|javascript|typescript|java|golang|go code|rust|c\+\+|bash|shell|react|node|kotlin|swift|solidity|terraform|jest|mocha)\b/i,
    /\b(?:TypeError|Exception|segfault|deadlock|null pointer|undefined)\b/,
  ],
  zh: ['代码', '函数', '脚本', '正则', '报错', '实现', '重构', '调试', '单元测试', '接口', 'SQL', '编程'],
});

/** Asking to weigh, compare, evaluate or review. */
const ANALYSIS_CUES = cueGroup({
  en: [
    /\banaly[sz](?:e|es|ing|is)\b/i,
    /\bcompar(?:e|es|ing|ison)\b|\bversus\b|\bvs\.?\s/i,
    /\btrade-?offs?\b|\bpros and cons\b/i,
    /\bevaluat(?:e|ion)\b|\bassess(?:ment)?\b/i,
    /\b(?:code )?review\b|\baudit\b/i,
    /\brecommend(?:ation)?s?\b|\brisks?\b/i,
    /\broot cause\b|\bwhy (?:it|this) is slow\b|\bbottlenecks?\b/i,
  ],
  zh: ['分析', '比较', '对比', '权衡', '优缺点', '优劣', '取舍', '评估', '审查', '审阅', '选型', '风险', '根本原因', '瓶颈'],
});

/** Asking for a plan, a design or an ordered procedure. */
const MULTI_STEP_CUES = cueGroup({
  en: [
    /\bstep[- ]by[- ]step\b|\bwalk me through\b|\beach step\b/i,
    /\bdesign\b|\barchitecture\b/i,
    /\b(?:migration|rollout|project|phased|implementation) plan\b|\bmilestones?\b|\bphases?\b/i,
    /\bcover(?:ing)?\b|\binclud(?:e|ing)\b/i,
    /\boptimi[sz](?:e|ation)\b|\bscal(?:e|ability)\b|\bhigh(?:ly)? availab/i,
    /\bthen\b.{0,80}\b(?:then|finally)\b/is,
  ],
  zh: ['一步一步', '一步步', '逐步', '分步', '设计', '架构', '方案', '规划', '优化', '迁移', '步骤', '包括', '包含', '流程'],
});

/**
 * Asking for something to be produced or explained rather than looked up. On
 * its own this is what separates "what is X" (light) from "explain X" or
 * "write me X" (standard).
 */
const TASK_CUES = cueGroup({
  en: [
    /\b(?:write|draft|create|generate|compose|rewrite|summari[sz]e|outline)\b/i,
    /\b(?:explain|describe|how (?:do|can|does|should) i|how does|why (?:does|is|do|might))\b/i,
    /\b(?:difference between|causes? of|pros and cons|examples?)\b/i,
    /\b(?:plan|itinerary|suggest|recommend|give me \d+)\b/i,
  ],
  zh: ['写', '解释', '总结', '整理', '规划', '推荐', '介绍', '为什么', '制定', '计划', '区别', '例子', '举例', '改写', '润色', '改得', '原因', '哪个更', '怎么做', '怎么办', '怎么查', '怎么避免', '怎么实现', '如何'],
});

/** Count the distinct cues of a group that occur in `text`. */
function countCues(group: CueGroup, text: string, hasHan: boolean): number {
  let hits = 0;
  for (const pattern of group.en) if (pattern.test(text)) hits += 1;
  for (const word of group.other) if (text.includes(word)) hits += 1;
  if (hasHan) for (const word of group.han) if (text.includes(word)) hits += 1;
  return hits;
}

const FENCE = /```/g;
const CODE_LINE =
  /^\s*(?:(?:def|class|function|func|fn|import|from|const|let|var|public|private|return|if|for|while|#include|SELECT|FROM|WHERE|resource|pragma|package)\b.*|.*(?:[;{}]|=>|:=)\s*)$/;

/** Pasted code: a fenced block counts as two cues, many code-shaped lines as more. */
function codeShape(text: string): number {
  const fences = text.match(FENCE)?.length ?? 0;
  let lines = 0;
  for (const line of text.split('\n')) if (line.length < 400 && CODE_LINE.test(line)) lines += 1;
  return (fences >= 2 ? 2 : 0) + (lines >= 3 ? 1 : 0) + (lines >= 15 ? 1 : 0);
}

const LIST_ITEM = /^\s*(?:\d{1,2}[.、)）]|[-*•]|[一二三四五六七八九十]+、)\s*\S/;
const QUESTION = /[?？]/g;

/** Numbered requirements, several questions, or long enumerations are multi-step by shape. */
function listShape(text: string): number {
  let items = 0;
  for (const line of text.split('\n')) if (LIST_ITEM.test(line)) items += 1;
  const questions = text.match(QUESTION)?.length ?? 0;
  const enumerations = countEnumerations(text, EN_LIST) + countEnumerations(text, ZH_LIST);
  return (items >= 3 ? 1 : 0) + (items >= 5 ? 1 : 0) + (questions >= 3 ? 1 : 0) + Math.min(2, enumerations);
}

interface ListSyntax {
  separator: number;
  /** Characters that end a sentence or clause, and so a list. */
  stops: ReadonlySet<number>;
  maxItemChars: number;
}
const codes = (chars: string): ReadonlySet<number> => new Set([...chars].map((char) => char.charCodeAt(0)));
const EN_LIST: ListSyntax = { separator: ','.charCodeAt(0), stops: codes('.;:?!\n'), maxItemChars: 40 };
const ZH_LIST: ListSyntax = { separator: '、'.charCodeAt(0), stops: codes('，。；：？！\n'), maxItemChars: 20 };
/** "reliability, ordering, throughput and latency": three separators after short items. */
const ENUMERATION_SEPARATORS = 3;

/**
 * Counts runs of short items joined by a separator: a brief that names many
 * facets to cover. A single linear pass, because the equivalent regular
 * expression backtracks for milliseconds over a 20 kB paste.
 */
function countEnumerations(text: string, syntax: ListSyntax): number {
  let found = 0;
  let run = 0;
  let itemChars = 0;
  const close = (): void => {
    if (run >= ENUMERATION_SEPARATORS) found += 1;
    run = 0;
    itemChars = 0;
  };
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === syntax.separator) {
      if (itemChars > 0 && itemChars <= syntax.maxItemChars) run += 1;
      else close();
      itemChars = 0;
    } else if (syntax.stops.has(code)) {
      close();
    } else {
      itemChars += 1;
    }
  }
  close();
  return found;
}

export type CueCounts = Record<'code' | 'math' | 'reasoning' | 'weakReasoning' | 'analysis' | 'multi_step' | 'task', number>;

/** Distinct cues per group in a task's text, plus code and list shape. */
export function cueCounts(text: string): CueCounts {
  // Most English prompts have no Han character: then some hundred Chinese cue words need no search.
  const hasHan = HAN.test(text);
  const count = (group: CueGroup): number => countCues(group, text, hasHan);
  return {
    code: count(CODE_CUES) + codeShape(text),
    math: count(MATH_CUES),
    reasoning: count(REASONING_CUES),
    weakReasoning: count(WEAK_REASONING_CUES),
    analysis: count(ANALYSIS_CUES),
    multi_step: count(MULTI_STEP_CUES) + listShape(text),
    task: count(TASK_CUES),
  };
}
