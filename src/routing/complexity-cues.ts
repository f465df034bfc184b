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

/**
 * One English cue: its pattern, and lower-case literals of which at least one
 * must occur for the pattern to match. The literals are looked for first
 * (`indexOf` on the lower-cased text), so a pattern runs only where it can
 * match, and from just before where its literal first occurs rather than from
 * the start: most of a prompt's cues are absent, and a literal search costs a
 * fraction of a regular expression's pass.
 */
interface EnglishCue {
  readonly needles: readonly string[];
  /** The pattern with the `g` flag, so a search can start at `lastIndex`. */
  readonly pattern: RegExp;
}

/** How far before its literal a cue's match can begin ("it is optimal", "knights … knaves" begin at most this far before). */
const MATCH_LEAD_CHARS = 100;

const cue = (needles: readonly string[], pattern: RegExp): EnglishCue => ({ needles, pattern: new RegExp(pattern.source, `${pattern.flags}g`) });

/** Whether an English cue occurs in `text`, given where its first literal occurs (-1: none). */
function hasCue({ pattern }: EnglishCue, text: string, first: number): boolean {
  if (first < 0) return false;
  pattern.lastIndex = Math.max(0, first - MATCH_LEAD_CHARS);
  const found = pattern.test(text);
  pattern.lastIndex = 0;
  return found;
}

interface CueGroup {
  readonly en: readonly EnglishCue[];
  /** Chinese cue words holding a Han character: found in one pass over the text (HAN_INDEX). */
  readonly han: readonly string[];
  /** The other Chinese-list words (e.g. `SQL`), searched in any text. */
  readonly other: readonly string[];
}

const HAN = /[\u3400-\u9fff]/;

/** A group with its Chinese words split once, at load, by whether they hold a Han character. */
function cueGroup({ en, zh }: { en: readonly EnglishCue[]; zh: readonly string[] }): CueGroup {
  return { en, han: zh.filter((word) => HAN.test(word)), other: zh.filter((word) => !HAN.test(word)) };
}

/**
 * Asking for a proof, a derivation, an argued optimum or a solved puzzle:
 * work that needs deep reasoning rather than knowledge or breadth.
 */
const REASONING_CUES = cueGroup({
  en: [
    cue(['prov', 'proof'], /\bprov(?:e|es|ing)\b|\bproofs?\b/i),
    cue(['disprove', 'counter'], /\bdisprove\b|\bcounter-?examples?\b/i),
    cue(['rigorous', 'justify every'], /\brigorous(?:ly)?\b|\bjustify every\b/i),
    cue(['deriv'], /\bderiv(?:e|ation)\b/i),
    cue(['optimal', 'no shorter', 'minimality', 'only consistent'], /\b(?:is|its|be|it's) optimal\b|\boptimality\b|\bno shorter\b|\bminimality\b|\bonly consistent\b/i),
    cue(['correctness', 'linearizab', 'invariant'], /\bcorrectness\b|\blinearizab(?:le|ility)\b|\binvariants?\b/i),
    cue(['knight', 'puzzle'], /\bknights?\b.{0,80}\bknaves?\b|\bpuzzle\b/is),
    cue([' all '], /\b(?:find|determine) all (?:functions|positive integers|integers|real|pairs|solutions)\b/i),
  ],
  zh: ['证明', '求证', '推导', '反例', '正确性', '推理题', '逻辑推理', '推理过程', '论证'],
});

/**
 * Optimisation and algorithmic wording. Ordinary briefs use these too ("the
 * constraints are…", "minimise downtime"), so they count half a reasoning cue.
 */
const WEAK_REASONING_CUES = cueGroup({
  en: [
    cue(['maximi', 'minimi'], /\b(?:maximi[sz]|minimi[sz])(?:e|es|ing)\b/i),
    cue(['subject to', 'constraint'], /\bsubject to\b|\bconstraints?\b/i),
    cue(['o(', ' time'], /\bO\((?:n|log|m|k|V|E)[^)]{0,14}\)|\b(?:linear|polynomial|logarithmic) time\b/),
    cue(['dynamic programming', 'np-', 'integer '], /\bdynamic programming\b|\bNP-(?:hard|complete)\b|\binteger (?:linear )?program/i),
    cue(['if and only if', 'probability'], /\bif and only if\b|\bprobability\b/i),
  ],
  zh: ['最优', '最大化', '最小化', '约束', '复杂度', '动态规划', '唯一', '严格'],
});

/** Mathematical content: notation, formulas and vocabulary. */
const MATH_CUES = cueGroup({
  en: [
    cue(['\\'], /\\(?:frac|int|sum|prod|sqrt|lim|ge|le|geq|leq|infty|cdot|alpha|beta|mathbb)\b/),
    cue(['$'], /\$[^$\n]{1,200}\$/),
    cue(['∫', '∑', '∏', '√', '≤', '≥', '≠', '≈', '∞', 'ℝ', 'ℕ', 'ℤ', '∀', '∃', '∈', '⊂'], /[∫∑∏√≤≥≠≈∞ℝℕℤ∀∃∈⊂]/u),
    cue(['^', '²', '³'], /\b[a-z]\s*\^\s*[\d(a-z]|\b[a-z]²|³/i),
    cue([')'], /\b[fgh]\s*\(\s*[a-z]\s*(?:[+\-*]\s*[a-z0-9]+\s*)?\)\s*=/i),
    cue(['theorem', 'lemma', 'integral', 'derivative', 'equation', 'inequalit', 'polynomial', 'recurrence', 'closed form', 'divisible', 'prime', 'irrational', 'colorable', 'colourable'], /\b(?:theorems?|lemmas?|integrals?|derivatives?|equations?|inequalit(?:y|ies)|polynomials?|recurrences?|closed form|divisible|primes?|irrational|colou?rable)\b/i),
  ],
  zh: ['积分', '导数', '微分', '方程', '不等式', '定理', '素数', '无理数', '概率', '级数', '函数方程', '多项式', '整除', '实根', '数学模型', '连续'],
});

/** Code to read or write. Fenced blocks and code-shaped lines are counted separately. */
const CODE_CUES = cueGroup({
  en: [
    cue(['function', 'method', 'class', 'script', 'regex', 'regular expression', 'query', 'sql', 'api', 'endpoint'], /\b(?:function|method|class|script|regex|regular expression|query|sql|api|endpoint)\b/i),
    cue(['code', 'implement', 'refactor', 'debug', 'bug', 'compile', 'unit test', 'stack trace'], /\b(?:code|codebase|implement(?:ation)?|refactor|debug|bug|compile|unit tests?|stack trace)\b/i),
    cue(['python', 'javascript', 'typescript', 'java', 'golang', 'go code', 'rust', 'c++', 'bash', 'shell', 'react', 'node', 'kotlin', 'swift', 'solidity', 'terraform', 'jest', 'mocha'], /\b(?:python|javascript|typescript|java|golang|go code|rust|c\+\+|bash|shell|react|node|kotlin|swift|solidity|terraform|jest|mocha)\b/i),
    cue(['typeerror', 'exception', 'segfault', 'deadlock', 'null pointer', 'undefined'], /\b(?:TypeError|Exception|segfault|deadlock|null pointer|undefined)\b/),
  ],
  zh: ['代码', '函数', '脚本', '正则', '报错', '实现', '重构', '调试', '单元测试', '接口', 'SQL', '编程'],
});

/** Asking to weigh, compare, evaluate or review. */
const ANALYSIS_CUES = cueGroup({
  en: [
    cue(['analy'], /\banaly[sz](?:e|es|ing|is)\b/i),
    cue(['compar', 'versus', 'vs'], /\bcompar(?:e|es|ing|ison)\b|\bversus\b|\bvs\.?\s/i),
    cue(['trade', 'pros and cons'], /\btrade-?offs?\b|\bpros and cons\b/i),
    cue(['evaluat', 'assess'], /\bevaluat(?:e|ion)\b|\bassess(?:ment)?\b/i),
    cue(['review', 'audit'], /\b(?:code )?review\b|\baudit\b/i),
    cue(['recommend', 'risk'], /\brecommend(?:ation)?s?\b|\brisks?\b/i),
    cue(['root cause', 'is slow', 'bottleneck'], /\broot cause\b|\bwhy (?:it|this) is slow\b|\bbottlenecks?\b/i),
  ],
  zh: ['分析', '比较', '对比', '权衡', '优缺点', '优劣', '取舍', '评估', '审查', '审阅', '选型', '风险', '根本原因', '瓶颈'],
});

/** Asking for a plan, a design or an ordered procedure. */
const MULTI_STEP_CUES = cueGroup({
  en: [
    cue(['step', 'walk me through'], /\bstep[- ]by[- ]step\b|\bwalk me through\b|\beach step\b/i),
    cue(['design', 'architecture'], /\bdesign\b|\barchitecture\b/i),
    cue([' plan', 'milestone', 'phase'], /\b(?:migration|rollout|project|phased|implementation) plan\b|\bmilestones?\b|\bphases?\b/i),
    cue(['cover', 'includ'], /\bcover(?:ing)?\b|\binclud(?:e|ing)\b/i),
    cue(['optimi', 'scal', 'availab'], /\boptimi[sz](?:e|ation)\b|\bscal(?:e|ability)\b|\bhigh(?:ly)? availab/i),
    cue(['then'], /\bthen\b.{0,80}\b(?:then|finally)\b/is),
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
    cue(['write', 'draft', 'create', 'generate', 'compose', 'summari', 'outline'], /\b(?:write|draft|create|generate|compose|rewrite|summari[sz]e|outline)\b/i),
    cue(['explain', 'describe', 'how ', 'why '], /\b(?:explain|describe|how (?:do|can|does|should) i|how does|why (?:does|is|do|might))\b/i),
    cue(['difference between', 'cause', 'pros and cons', 'example'], /\b(?:difference between|causes? of|pros and cons|examples?)\b/i),
    cue(['plan', 'itinerary', 'suggest', 'recommend', 'give me '], /\b(?:plan|itinerary|suggest|recommend|give me \d+)\b/i),
  ],
  zh: ['写', '解释', '总结', '整理', '规划', '推荐', '介绍', '为什么', '制定', '计划', '区别', '例子', '举例', '改写', '润色', '改得', '原因', '哪个更', '怎么做', '怎么办', '怎么查', '怎么避免', '怎么实现', '如何'],
});

/** Count the distinct English and other-list cues of a group in `text`; `firsts` holds where each English cue's first literal occurs. */
function countCues(group: CueGroup, text: string, firsts: ReadonlyMap<EnglishCue, number>): number {
  let hits = 0;
  for (const cue of group.en) if (hasCue(cue, text, firsts.get(cue) ?? -1)) hits += 1;
  for (const word of group.other) if (text.includes(word)) hits += 1;
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

/** Numbered requirements, several questions, or long enumerations are multi-step by shape. */
function listShape(text: string): number {
  let items = 0;
  let questions = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (LIST_ITEM.test(text.slice(start, Math.min(end, start + 24)))) items += 1;
    start = end + 1;
  }
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 63 || code === 0xff1f) questions += 1;
  }
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
 * expression backtracks for milliseconds over a 20 kB paste; and none at all
 * when the separator does not occur three times.
 */
function countEnumerations(text: string, syntax: ListSyntax): number {
  const separator = String.fromCharCode(syntax.separator);
  let at = text.indexOf(separator);
  for (let seen = 0; seen < ENUMERATION_SEPARATORS - 1 && at >= 0; seen += 1) at = text.indexOf(separator, at + 1);
  if (at < 0) return 0;
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

type GroupName = 'code' | 'math' | 'reasoning' | 'weakReasoning' | 'analysis' | 'multi_step' | 'task';
const GROUPS: ReadonlyArray<[GroupName, CueGroup]> = [
  ['code', CODE_CUES],
  ['math', MATH_CUES],
  ['reasoning', REASONING_CUES],
  ['weakReasoning', WEAK_REASONING_CUES],
  ['analysis', ANALYSIS_CUES],
  ['multi_step', MULTI_STEP_CUES],
  ['task', TASK_CUES],
];

/**
 * Every Chinese cue word, by its first character: one pass over the text
 * finds them all, instead of a search per word (there are about a hundred).
 * Each entry carries its group and a bit distinct within the group.
 */
const HAN_INDEX: ReadonlyMap<number, ReadonlyArray<{ word: string; group: number; bit: number }>> = (() => {
  const index = new Map<number, Array<{ word: string; group: number; bit: number }>>();
  GROUPS.forEach(([, group], groupIndex) => {
    group.han.forEach((word, bit) => {
      const first = word.charCodeAt(0);
      index.set(first, [...(index.get(first) ?? []), { word, group: groupIndex, bit }]);
    });
  });
  return index;
})();

/** Distinct Chinese cue words per group (GROUPS order). */
function hanCues(text: string): number[] {
  const seen = GROUPS.map(() => new Set<number>());
  for (let i = 0; i < text.length; i += 1) {
    const candidates = HAN_INDEX.get(text.charCodeAt(i));
    if (candidates === undefined) continue;
    for (const { word, group, bit } of candidates) if (text.startsWith(word, i)) seen[group]?.add(bit);
  }
  return seen.map((set) => set.size);
}

/**
 * Every English cue's literals, by their first two characters: one pass over
 * the lower-cased text finds where each cue's literals first occur, instead of
 * a search of the whole text per literal (there are about two hundred).
 * Literals of two or more characters start with two ASCII characters and are
 * found through a table indexed by that pair; one-character literals (`$`,
 * `^`, `∫`…) through a table by character.
 */
interface Literal {
  readonly needle: string;
  readonly cue: EnglishCue;
}
const PAIRS: ReadonlyArray<readonly Literal[] | undefined> = (() => {
  const pairs: Array<Literal[] | undefined> = new Array<Literal[] | undefined>(128 * 128).fill(undefined);
  for (const [, group] of GROUPS) {
    for (const cue of group.en) {
      for (const needle of cue.needles) {
        if (needle.length < 2) continue;
        const [a, b] = [needle.charCodeAt(0), needle.charCodeAt(1)];
        if (a >= 128 || b >= 128) throw new Error(`cue literal ${needle} must start with two ASCII characters`);
        (pairs[a * 128 + b] ??= []).push({ needle, cue });
      }
    }
  }
  return pairs;
})();
const SINGLES: ReadonlyMap<number, readonly EnglishCue[]> = (() => {
  const singles = new Map<number, EnglishCue[]>();
  for (const [, group] of GROUPS) for (const cue of group.en) for (const needle of cue.needles) if (needle.length === 1) singles.set(needle.charCodeAt(0), [...(singles.get(needle.charCodeAt(0)) ?? []), cue]);
  return singles;
})();

const ASCII_SINGLES: Uint8Array = (() => {
  const flags = new Uint8Array(128);
  for (const code of SINGLES.keys()) if (code < 128) flags[code] = 1;
  return flags;
})();

function firstLiterals(lower: string): Map<EnglishCue, number> {
  const firsts = new Map<EnglishCue, number>();
  for (let i = 0; i < lower.length; i += 1) {
    const first = lower.charCodeAt(i);
    if (first >= 128 || ASCII_SINGLES[first] === 1) {
      const one = SINGLES.get(first);
      if (one !== undefined) for (const cue of one) if (!firsts.has(cue)) firsts.set(cue, i);
      if (first >= 128) continue;
    }
    if (i + 1 >= lower.length) break;
    const second = lower.charCodeAt(i + 1);
    if (second >= 128) continue;
    const two = PAIRS[first * 128 + second];
    if (two === undefined) continue;
    for (const { needle, cue } of two) if (!firsts.has(cue) && lower.startsWith(needle, i)) firsts.set(cue, i);
  }
  return firsts;
}

/** Distinct cues per group in a task's text, plus code and list shape. */
export function cueCounts(text: string): CueCounts {
  const firsts = firstLiterals(text.toLowerCase());
  // Most English prompts have no Han character: then the Chinese cue words need no search.
  const han = HAN.test(text) ? hanCues(text) : undefined;
  const counts = GROUPS.map(([, group], index) => countCues(group, text, firsts) + (han?.[index] ?? 0));
  const [code = 0, math = 0, reasoning = 0, weakReasoning = 0, analysis = 0, multiStep = 0, task = 0] = counts;
  return {
    code: code + codeShape(text),
    math,
    reasoning,
    weakReasoning,
    analysis,
    multi_step: multiStep + listShape(text),
    task,
  };
}
