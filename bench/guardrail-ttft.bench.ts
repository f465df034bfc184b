// Time-to-first-token the streamed output guardrails add (DESIGN §8: added
// latency is bounded by the hold-back window, and measured). Replies are
// streamed through the output filter in real time at a model-like cadence
// (20-char deltas every 20 ms by default); the added TTFT is the time from the
// first text the filter received to the first text it released. A reply no
// longer than the window is released only when its block ends, so its added
// TTFT is the whole reply's duration.
//
// Each reply is measured with the default detectors as they are now, and with
// the 4095-char window the PEM private-key cap imposed before open-ended
// matches (`legacy`), on the same filter code.
//
// Run: node --import ./src/compat/node20.mjs --import tsx bench/guardrail-ttft.bench.ts
//      [--delta-chars 20] [--delta-ms 20] [--runs 3]
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { CanonicalEvent } from '../src/data-plane/canonical';
import { createGuardrails, defaultDetectors, resolvePolicies, type GuardrailPolicy } from '../src/guardrails';
import { DEFAULT_POLICY_BY_CATEGORY } from '../src/guardrails/guardrail-policy';
import { createOutputFilter, type OutputFilter } from '../src/guardrails/output-filter';

const { values: args } = parseArgs({
  options: {
    'delta-chars': { type: 'string', default: '20' },
    'delta-ms': { type: 'string', default: '20' },
    runs: { type: 'string', default: '3' },
  },
});
const DELTA_CHARS = Number(args['delta-chars']);
const DELTA_MS = Number(args['delta-ms']);
const RUNS = Number(args.runs);
const LEGACY_WINDOW = 4095;
const LENGTHS = [200, 600, 1500, 5000];

const PROSE = {
  English:
    'Thanks for the question. The short answer is that the cache is rebuilt on every deploy, so the first requests after a release ' +
    'are slower while it warms up. If that matters for your service, warm it in the readiness probe before traffic arrives. ',
  Chinese:
    '感谢您的提问。简单来说，每次发布后缓存都会重建，因此发布后的最初几个请求会比较慢，直到缓存预热完成。' +
    '如果这对您的服务很重要，可以在就绪探针中预先加载缓存，然后再接入流量。这样用户几乎感觉不到任何延迟。',
} as const;

function reply(prose: string, length: number): string[] {
  let text = '';
  while (text.length < length) text += prose;
  text = text.slice(0, length);
  const deltas: string[] = [];
  for (let at = 0; at < text.length; at += DELTA_CHARS) deltas.push(text.slice(at, at + DELTA_CHARS));
  return deltas;
}

const blockList = ['forbidden'];
const guardrails = createGuardrails({ detectors: defaultDetectors(blockList), policies: resolvePolicies() });
const active = defaultDetectors(blockList).flatMap((detector) => {
  const policy: GuardrailPolicy = DEFAULT_POLICY_BY_CATEGORY[detector.category];
  return policy === 'off' ? [] : [{ detector, policy }];
});
const filters: Record<string, { window: number; create: () => OutputFilter }> = {
  current: { window: guardrails.outputWindow, create: () => guardrails.createOutputFilter() },
  legacy: { window: LEGACY_WINDOW, create: () => createOutputFilter(active, LEGACY_WINDOW) },
};

/** Streams one reply in real time; ms from the first delta pushed to the first text released. */
async function addedTtft(create: () => OutputFilter, deltas: readonly string[]): Promise<number> {
  const filter = create();
  const released = (events: CanonicalEvent[]) => events.some((event) => event.type === 'text_delta' && event.text.length > 0);
  filter.push({ type: 'message_start', id: 'msg_bench', model: 'bench' });
  filter.push({ type: 'block_start', index: 0, block: { type: 'text' } });
  let first: number | null = null;
  for (const [i, text] of deltas.entries()) {
    if (i > 0) await delay(DELTA_MS);
    const now = performance.now();
    first ??= now;
    if (released(filter.push({ type: 'text_delta', index: 0, text }))) return performance.now() - first;
  }
  // Upstream closes the block one cadence step after the last delta.
  await delay(DELTA_MS);
  filter.push({ type: 'block_stop', index: 0 });
  return performance.now() - (first ?? performance.now());
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

interface Row {
  language: string;
  length: number;
  filter: string;
  ms: number;
}

const jobs: Array<Promise<Row>> = [];
for (const [language, prose] of Object.entries(PROSE)) {
  for (const length of LENGTHS) {
    for (const [name, { create }] of Object.entries(filters)) {
      jobs.push(
        (async () => {
          const samples: number[] = [];
          for (let run = 0; run < RUNS; run++) samples.push(await addedTtft(create, reply(prose, length)));
          return { language, length, filter: name, ms: median(samples) };
        })(),
      );
    }
  }
}
const rows = await Promise.all(jobs);

process.stdout.write(
  `cadence: ${DELTA_CHARS}-char deltas every ${DELTA_MS} ms; median of ${RUNS} runs\n` +
    `windows: current ${filters.current!.window} chars, legacy ${LEGACY_WINDOW} chars\n\n` +
    'language  reply chars  added TTFT current  added TTFT legacy\n',
);
for (const [language] of Object.entries(PROSE)) {
  for (const length of LENGTHS) {
    const cell = (filter: string) => rows.find((row) => row.language === language && row.length === length && row.filter === filter)!.ms;
    process.stdout.write(
      `${language.padEnd(9)} ${String(length).padStart(11)} ${`${cell('current').toFixed(0)} ms`.padStart(19)} ${`${cell('legacy').toFixed(0)} ms`.padStart(18)}\n`,
    );
  }
}
