// What the streamed output guardrails add to a stream (docs/architecture.md §6: text is held
// back only while it could still be part of a match; added latency is
// measured). `npm run bench` calls runGuardrailStreamBench() at its end; run
// alone: node --import ./src/compat/node20.mjs --import tsx bench/guardrail-ttft.bench.ts [--runs 5]
//
// 1. Latency. Answers are streamed through the filter in real time, each delta
//    at its scheduled time, the way an upstream sends them: the case
//    (430 chars of ordinary Chinese, 2 chars every 30 ms, about 60 tokens/s),
//    ordinary English cut into o200k tokens at 60 tokens/s, and a mixed answer
//    with a phone number, an e-mail address and an API key in it. Per stream:
//    the time to first text the filter adds (first delta in → first text out),
//    and per delta the time from its arrival until all of its text is out
//    (p50, p99, max over every delta of every run). Each stream runs through
//    the filter as it is and through the same filter with the fixed 344-char
//    window the code held back before (a rule that holds the last 344 chars of
//    every block, added to the default ones).
// 2. CPU per pushed delta: the deltas of those streams pushed back to back, and
//    the 20-char deltas of mixed English/Chinese prose the earlier 7.4 µs
//    figure was measured on.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { decode, encode } from 'gpt-tokenizer';
import type { CanonicalEvent } from '../src/core/canonical';
import { createGuardrails, defaultDetectors, resolvePolicies, type Detector, type Guardrails } from '../src/guardrails';
import { applyRedactions, scanText, type ActiveDetector, type RuleMatch } from '../src/guardrails/text-scanner';

const BLOCK_LIST = ['forbidden'];
const OLD_WINDOW = 344;
const TARGET_MS = 20;
const TARGET_CPU_US = 7.4;

const CHINESE =
  '感谢您的提问。简单来说，每次发布之后缓存都会重建，因此发布后的最初几个请求会比较慢，直到缓存预热完成为止。' +
  '如果这对您的服务很重要，可以在就绪探针中预先加载缓存，然后再接入流量，这样用户几乎感觉不到任何延迟。' +
  '另外，建议把缓存的容量和过期时间设置得合理一些：容量太小会导致频繁淘汰，过期时间太短会让命中率下降。' +
  '监控方面，可以关注命中率、加载耗时和内存占用这三项指标，并为它们设置告警阈值。' +
  '如果发现命中率持续偏低，通常说明访问模式发生了变化，这时需要重新评估哪些数据值得缓存。' +
  '最后，发布前在预发环境里做一次压测，确认缓存预热的时间在可以接受的范围之内，再逐步放量到生产环境。' +
  '放量的过程中要盯住错误率和延迟，一旦发现异常就先回滚，再慢慢排查原因：缓存慢一点只是体验问题，发布出错却会造成故障。' +
  '总之，把预热、监控和回滚这三件事做好，缓存重建带来的影响就可以控制在很小的范围内。' +
  '如果您愿意，我也可以帮您写一份预热脚本的示例，或者一起看看现有的监控面板还缺少哪些指标。';

const ENGLISH =
  'Thanks for the question. The short answer is that the cache is rebuilt on every deploy, so the first requests after a release ' +
  'are slower while it warms up. If that matters for your service, warm it in the readiness probe before traffic arrives, and the ' +
  'users will hardly notice any delay at all. It also helps to size the cache sensibly: too small and entries are evicted all the ' +
  'time, too short an expiry and the hit rate drops. For monitoring, watch the hit rate, the load time and the memory use, and set ' +
  'an alert on each of them. A hit rate that stays low usually means the access pattern has changed, which is a good moment to ' +
  "reconsider what is worth caching in the first place. Finally, run a load test in staging before each release, check that the " +
  'warm-up fits within the time you can accept, and then roll out to production step by step, watching the error rate as you go. ' +
  'If anything looks wrong, roll back first and investigate afterwards; a slow cache is an annoyance, but a broken release is an outage.';

const SENSITIVE =
  '好的，已经为您查到联系方式。客服电话是 13800138000，工作时间为每天九点到十八点；' +
  'you can also write to li.lei@example.com and mention your order number. ' +
  '调试用的密钥是 sk-proj-4bN7xQ2mR9kT1vW8yZ3cL6fH0jP5sD2g ，请不要把它提交到代码仓库。' +
  'If the key was exposed, rotate it in the console right away and update the service configuration.';

/** Chinese as the issue describes it: `size` chars every delta. */
function charDeltas(text: string, size: number): string[] {
  const deltas: string[] = [];
  for (let at = 0; at < text.length; at += size) deltas.push(text.slice(at, at + size));
  return deltas;
}

/** One o200k token per delta, as OpenAI-style upstreams stream; tokens that end inside a character are merged with the next. */
function tokenDeltas(text: string): string[] {
  const tokens = encode(text);
  const deltas: string[] = [];
  let sent = '';
  for (let i = 1; i <= tokens.length; i++) {
    const decoded = decode(tokens.slice(0, i));
    if (decoded.endsWith('\uFFFD') && i < tokens.length) continue;
    deltas.push(decoded.slice(sent.length));
    sent = decoded;
  }
  return deltas;
}

interface Stream {
  name: string;
  cadence: string;
  deltas: string[];
  intervalMs: number;
  /** Ordinary text: the targets apply. */
  ordinary: boolean;
}

const TOKEN_MS = 1000 / 60;

function streams(): Stream[] {
  return [
    { name: `Chinese, ${CHINESE.length} chars`, cadence: '2 chars / 30 ms', deltas: charDeltas(CHINESE, 2), intervalMs: 30, ordinary: true },
    { name: `English, ${ENGLISH.length} chars`, cadence: '1 token / 16.7 ms', deltas: tokenDeltas(ENGLISH), intervalMs: TOKEN_MS, ordinary: true },
    { name: 'phone, e-mail and key in zh/en', cadence: '1 token / 16.7 ms', deltas: tokenDeltas(SENSITIVE), intervalMs: TOKEN_MS, ordinary: false },
  ];
}

/** The rule the filter followed before: hold the last `window` chars of every block. */
function fixedWindow(window: number): Detector {
  return {
    rule: 'fixed-window',
    category: 'pii',
    find: () => [],
    holdFrom: (text, from) => Math.max(from, text.length - window),
  };
}

interface Filter {
  name: string;
  guardrails: Guardrails;
  active: ActiveDetector[];
  /** Streams it is run on (all when absent). */
  only?: (stream: Stream) => boolean;
}

function filters(): Filter[] {
  const detectors = defaultDetectors(BLOCK_LIST);
  const policies = resolvePolicies();
  const active = detectors.flatMap((detector) => {
    const policy = policies[detector.rule];
    return policy === undefined || policy === 'off' ? [] : [{ detector, policy }];
  });
  // English words are held while they could still be the local part of an address: this variant shows what that rule costs.
  const emailFlagged = { ...policies, email: 'flag' as const };
  return [
    { name: 'holds only what could be a match', guardrails: createGuardrails({ detectors, policies }), active },
    {
      name: 'the same, e-mail rule set to flag',
      guardrails: createGuardrails({ detectors, policies: emailFlagged }),
      active: active.map((entry) => (entry.detector.rule === 'email' ? { ...entry, policy: 'flag' as const } : entry)),
      only: (stream) => stream.name.startsWith('English'),
    },
    {
      name: `fixed ${OLD_WINDOW}-char window (old rule)`,
      guardrails: createGuardrails({ detectors: [...detectors, fixedWindow(OLD_WINDOW)], policies: { ...policies, 'fixed-window': 'redact' } }),
      active,
    },
  ];
}

function deltaText(event: CanonicalEvent): string | null {
  return event.type === 'text_delta' ? event.text : null;
}

/**
 * How long the filtered text must be once delta `i` is all out: the
 * whole-text result up to the delta's end, widened to the end of a masked
 * span it ends inside (a span goes out whole).
 */
function neededLengths(deltas: readonly string[], matches: readonly RuleMatch[]): number[] {
  const text = deltas.join('');
  let end = 0;
  return deltas.map((piece) => {
    end += piece.length;
    let upTo = end;
    for (const match of matches) if (match.policy === 'redact' && match.start < upTo && match.end > upTo) upTo = match.end;
    return applyRedactions(text.slice(0, upTo), matches.filter((match) => match.end <= upTo)).length;
  });
}

interface Timing {
  ttftMs: number;
  /** Per delta: ms from its arrival until all of its text was out. */
  delaysMs: number[];
}

const sleepUntil = (at: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));

/** Streams one answer through a fresh filter in real time. */
async function timeStream(filter: Filter, stream: Stream): Promise<Timing> {
  const output = filter.guardrails.createOutputFilter();
  const needed = neededLengths(stream.deltas, scanText(stream.deltas.join(''), filter.active));
  const arrivals: number[] = [];
  const done: number[] = [];
  let released = 0;
  let firstText: number | null = null;
  const push = (event: CanonicalEvent) => {
    const events = output.push(event);
    const now = performance.now();
    for (const emitted of events) {
      const text = deltaText(emitted);
      if (text === null || text.length === 0) continue;
      firstText ??= now;
      released += text.length;
    }
    while (done.length < arrivals.length && released >= (needed[done.length] ?? Infinity)) done.push(now);
  };
  push({ type: 'message_start', id: 'msg_bench', model: 'bench' });
  push({ type: 'block_start', index: 0, block: { type: 'text' } });
  // Deltas keep to their schedule from the first one on (a late timer does not shift the ones after it).
  let start = 0;
  for (const [i, text] of stream.deltas.entries()) {
    if (i > 0) await sleepUntil(start + i * stream.intervalMs);
    arrivals.push(performance.now());
    if (i === 0) start = arrivals[0] as number;
    push({ type: 'text_delta', index: 0, text });
  }
  // Upstream closes the block one cadence step after its last delta.
  await sleepUntil(start + stream.deltas.length * stream.intervalMs);
  push({ type: 'block_stop', index: 0 });
  push({ type: 'message_stop', stopReason: 'end_turn' });
  return { ttftMs: (firstText ?? performance.now()) - (arrivals[0] ?? 0), delaysMs: arrivals.map((arrived, i) => (done[i] ?? arrived) - arrived) };
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/** µs of CPU (user + system) per pushed delta, over enough repetitions of `deltas` to make the clock's grain irrelevant. */
function cpuPerDelta(guardrails: Guardrails, deltas: readonly string[], minDeltas: number): number {
  const run = (count: number) => {
    let pushed = 0;
    while (pushed < count) {
      const filter = guardrails.createOutputFilter();
      for (const text of deltas) filter.push({ type: 'text_delta', index: 0, text });
      filter.push({ type: 'block_stop', index: 0 });
      pushed += deltas.length;
    }
    return pushed;
  };
  run(Math.min(minDeltas, 20_000)); // warm-up: regexes compiled, JIT settled
  const before = process.cpuUsage();
  const pushed = run(minDeltas);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / pushed;
}

/** The deltas the earlier 7.4 µs figure was measured on: one long block of mixed prose in 20-char deltas. */
function mixedProseDeltas(withPii: boolean): string[] {
  const prose =
    'The quarterly report shows revenue grew in every region. 第三季度各地区收入均有增长，成本保持稳定。 ' +
    'Contact the finance team for details, and remember to review the appendix before the meeting. ';
  const unit = withPii ? `${prose}Mail ops@example.com or call 13800138000. ` : prose;
  const count = 200_000;
  let text = '';
  while (text.length < count * 20) text += unit;
  return Array.from({ length: count }, (_, i) => text.slice(i * 20, (i + 1) * 20));
}

const fmt = (value: number, digits = 1) => value.toFixed(digits);
const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

export interface GuardrailStreamBenchOptions {
  /** Real-time runs per stream and filter (they run side by side). */
  runs?: number;
  write?: (line: string) => void;
}

/** Measures and prints the latency and CPU the streamed output guardrails add; see the top of this file. */
export async function runGuardrailStreamBench({ runs = 5, write = (line) => process.stdout.write(`${line}\n`) }: GuardrailStreamBenchOptions = {}): Promise<void> {
  const all = streams();
  const variants = filters();
  // Compile the regexes and settle the JIT first: the first call of a process pays that once, not every stream.
  for (const filter of variants) for (const stream of all) cpuPerDelta(filter.guardrails, stream.deltas, 2_000);
  const jobs = variants.flatMap((filter) =>
    all.filter((stream) => filter.only?.(stream) ?? true).map(async (stream) => ({ filter, stream, timings: await Promise.all(Array.from({ length: runs }, () => timeStream(filter, stream))) })),
  );
  const results = await Promise.all(jobs);

  write('');
  write(`Streamed output guardrails: time added to a stream (default policies, ${runs} real-time runs per row)`);
  write('');
  write('| stream | cadence | deltas | filter | added TTFT p50 ms | per-delta added p50 ms | p99 ms | max ms |');
  write('|---|---|---:|---|---:|---:|---:|---:|');
  for (const { filter, stream, timings } of results) {
    const delays = timings.flatMap((timing) => timing.delaysMs);
    const ttft = quantile(timings.map((timing) => timing.ttftMs), 0.5);
    write(
      `| ${stream.name} | ${stream.cadence} | ${stream.deltas.length} | ${filter.name} | ${fmt(ttft)} | ${fmt(quantile(delays, 0.5))} | ${fmt(quantile(delays, 0.99))} | ${fmt(Math.max(...delays))} |`,
    );
  }

  const current = variants[0] as Filter;
  const cpuRows: Array<[string, number]> = [
    ['mixed prose, 20-char deltas (as the earlier 7.4 µs)', cpuPerDelta(current.guardrails, mixedProseDeltas(false), 200_000)],
    ['mixed prose with an address and a phone every ~250 chars, 20-char deltas', cpuPerDelta(current.guardrails, mixedProseDeltas(true), 200_000)],
    ...all.map((stream): [string, number] => [`${stream.name}, ${stream.cadence}`, cpuPerDelta(current.guardrails, stream.deltas, 100_000)]),
  ];
  write('');
  write('| filter CPU per pushed delta | µs |');
  write('|---|---:|');
  for (const [name, us] of cpuRows) write(`| ${name} | ${fmt(us, 2)} |`);

  write('');
  write(`Targets (ordinary text, ${current.name}):`);
  for (const { filter, stream, timings } of results) {
    if (filter !== current || !stream.ordinary) continue;
    const ttft = quantile(timings.map((timing) => timing.ttftMs), 0.5);
    const p99 = quantile(timings.flatMap((timing) => timing.delaysMs), 0.99);
    write(`- ${stream.name}: added TTFT p50 ${fmt(ttft)} ms (≤ ${TARGET_MS} ms) ${verdict(ttft <= TARGET_MS)}; per-delta added p99 ${fmt(p99)} ms (≤ ${TARGET_MS} ms) ${verdict(p99 <= TARGET_MS)}`);
  }
  const cpu = Math.max(...cpuRows.map(([, us]) => us));
  write(`- filter CPU per delta, highest row: ${fmt(cpu, 2)} µs (≤ ${TARGET_CPU_US} µs) ${verdict(cpu <= TARGET_CPU_US)}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
  await runGuardrailStreamBench({ runs: Number(values.runs) });
}
