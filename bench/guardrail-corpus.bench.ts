// What reading texts the way a reader does (src/guardrails/text-view.ts)
// costs and changes, on realistic input: every distinct text of the routing
// corpus (867 requests in Chinese and English from six departments, Claude
// Code turns with their 16 kB system prompt and tool results) and the
// guardrail tests' look-alikes. Run: node --import ./src/compat/node20.mjs
// --import tsx bench/guardrail-corpus.bench.ts
//
// 1. Matches per rule with the detectors reading the raw text (how every
//    gateway before this one read it) and reading its view: any match the
//    view adds on ordinary text is a false positive the change introduced,
//    and each is listed.
// 2. Input check CPU: µs per kB of text for the raw read and the view read,
//    for plain ASCII, Chinese (full-width punctuation), and obfuscated text.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { CanonicalContent } from '../src/core/canonical';
import { defaultDetectors, resolvePolicies, type Detector } from '../src/guardrails';
import { scanText, wholeTextMatches, type ActiveDetector, type RuleMatch } from '../src/guardrails/text-scanner';
import { LOOK_ALIKES } from '../test/unit/guardrails/guardrail-arbitraries';
import { loadCorpus, toRequest } from '../scripts/routing-corpus';

const BLOCK_LIST = ['forbidden', 'project-nightingale', '夜莺计划'];

/** The detectors reading the raw text, as before the view existed. */
function rawScan(text: string, active: readonly ActiveDetector[]): RuleMatch[] {
  const matches: RuleMatch[] = [];
  for (const { detector, policy } of active) for (const { start, end } of wholeTextMatches(detector, text)) matches.push({ rule: detector.rule, policy, start, end });
  return matches;
}

function contentTexts(content: readonly CanonicalContent[], into: Set<string>): void {
  for (const block of content) {
    if (block.type === 'text') into.add(block.text);
    else if (block.type === 'tool_result') contentTexts(block.content, into);
    else if (block.type === 'tool_use') into.add(JSON.stringify(block.input));
  }
}

/** Every distinct text the corpus's requests hold: systems, messages, tool inputs and results. */
function corpusTexts(): string[] {
  const texts = new Set<string>();
  for (const item of loadCorpus()) {
    const request = toRequest(item);
    if (request.system !== undefined) texts.add(request.system);
    for (const message of request.messages) contentTexts(message.content, texts);
  }
  return [...texts];
}

interface Counts {
  raw: Map<string, number>;
  view: Map<string, number>;
  /** Matches only the view has, as `rule: text around it`. */
  added: string[];
  /** Matches only the raw read had. */
  lost: string[];
}

function compare(texts: readonly string[], active: readonly ActiveDetector[]): Counts {
  const counts: Counts = { raw: new Map(), view: new Map(), added: [], lost: [] };
  const key = (match: RuleMatch) => `${match.rule} ${match.start}-${match.end}`;
  for (const text of texts) {
    const raw = rawScan(text, active);
    const view = scanText(text, active);
    for (const match of raw) counts.raw.set(match.rule, (counts.raw.get(match.rule) ?? 0) + 1);
    for (const match of view) counts.view.set(match.rule, (counts.view.get(match.rule) ?? 0) + 1);
    const rawKeys = new Set(raw.map(key));
    const viewKeys = new Set(view.map(key));
    const around = (match: RuleMatch) => `${match.rule}: ${JSON.stringify(text.slice(Math.max(0, match.start - 20), match.end + 20))}`;
    for (const match of view) if (!rawKeys.has(key(match))) counts.added.push(around(match));
    for (const match of raw) if (!viewKeys.has(key(match))) counts.lost.push(around(match));
  }
  return counts;
}

/** µs of CPU per kB of text for one way of scanning, over enough repetitions. */
function cpuPerKb(texts: readonly string[], scan: (text: string) => unknown): number {
  const chars = texts.reduce((sum, text) => sum + text.length, 0);
  const rounds = Math.max(3, Math.ceil(2_000_000 / Math.max(1, chars)));
  for (const text of texts) scan(text);
  const before = process.cpuUsage();
  for (let round = 0; round < rounds; round++) for (const text of texts) scan(text);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / ((rounds * chars) / 1024);
}

export function runGuardrailCorpusBench(write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): void {
  const detectors: Detector[] = defaultDetectors(BLOCK_LIST);
  const policies = resolvePolicies();
  // Every rule, flag ones included: a false positive counts whatever the policy does with it.
  const active: ActiveDetector[] = detectors.map((detector) => ({ detector, policy: policies[detector.rule] === 'off' ? 'flag' : (policies[detector.rule] as ActiveDetector['policy']) }));
  const started = performance.now();
  const corpus = corpusTexts();
  const corpusChars = corpus.reduce((sum, text) => sum + text.length, 0);

  write('');
  write(`Guardrail matches per rule, detectors reading the raw text vs its view (routing corpus: ${corpus.length} distinct texts, ${Math.round(corpusChars / 1024)} kB; guardrail look-alikes: ${LOOK_ALIKES.length})`);
  write('');
  write('| corpus | rule | raw read | view read |');
  write('|---|---|---:|---:|');
  const sets: Array<[string, readonly string[]]> = [
    ['routing corpus', corpus],
    ['guardrail look-alikes', LOOK_ALIKES],
  ];
  const results = sets.map(([name, texts]) => [name, compare(texts, active)] as const);
  for (const [name, counts] of results) {
    for (const { detector } of active) write(`| ${name} | ${detector.rule} | ${counts.raw.get(detector.rule) ?? 0} | ${counts.view.get(detector.rule) ?? 0} |`);
  }
  for (const [name, counts] of results) {
    write('');
    write(`${name}: ${counts.added.length} match(es) only the view finds, ${counts.lost.length} only the raw read found`);
    for (const line of counts.added) write(`  + ${line}`);
    for (const line of counts.lost) write(`  - ${line}`);
  }

  const ascii = corpus.filter((text) => /^[\x00-\x24\x27-\x7f]*$/.test(text));
  const chinese = corpus.filter((text) => /[\u4e00-\u9fff]/.test(text));
  const obfuscated = LOOK_ALIKES.filter((text) => !/^[\x00-\x24\x27-\x7f]*$/.test(text));
  write('');
  write('| input check CPU, µs per kB | texts | raw read | view read |');
  write('|---|---:|---:|---:|');
  for (const [name, texts] of [
    ['plain ASCII (no % or &)', ascii],
    ['with Chinese', chinese],
    ['the whole routing corpus', corpus],
    ['look-alikes with non-ASCII, %, &', obfuscated],
  ] as const) {
    write(`| ${name} | ${texts.length} | ${cpuPerKb(texts, (text) => rawScan(text, active)).toFixed(1)} | ${cpuPerKb(texts, (text) => scanText(text, active)).toFixed(1)} |`);
  }
  write('');
  write(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) runGuardrailCorpusBench();
