// Cost of the streamed output guardrails per pushed delta, and the hold-back
// window they impose (DESIGN §8: added latency is bounded by the window, and
// measured). Run: node --import ./src/compat/node20.mjs --import tsx bench/guardrail-window.bench.ts
import { performance } from 'node:perf_hooks';
import { createGuardrails, defaultDetectors, resolvePolicies } from '../src/guardrails';

const DELTA_CHARS = 20;
const DELTAS = 200_000;
const PROSE =
  'The quarterly report shows revenue grew in every region. 第三季度各地区收入均有增长，成本保持稳定。 ' +
  'Contact the finance team for details, and remember to review the appendix before the meeting. ';

function deltas(prose: string): string[] {
  let text = '';
  while (text.length < DELTAS * DELTA_CHARS) text += prose;
  return Array.from({ length: DELTAS }, (_, i) => text.slice(i * DELTA_CHARS, (i + 1) * DELTA_CHARS));
}

function measure(label: string, pieces: readonly string[]): void {
  const guardrails = createGuardrails({ detectors: defaultDetectors(['forbidden']), policies: resolvePolicies() });
  // Warm-up so the regexes are compiled and the JIT has settled.
  const warm = guardrails.createOutputFilter();
  for (const piece of pieces.slice(0, 20_000)) warm.push({ type: 'text_delta', index: 0, text: piece });

  const filter = guardrails.createOutputFilter();
  const started = performance.now();
  let released = 0;
  for (const piece of pieces) {
    for (const event of filter.push({ type: 'text_delta', index: 0, text: piece })) {
      if (event.type === 'text_delta') released += event.text.length;
    }
  }
  const elapsedMs = performance.now() - started;
  const nsPerDelta = Math.round((elapsedMs * 1e6) / pieces.length);
  process.stdout.write(`${label}: ${nsPerDelta} ns per ${DELTA_CHARS}-char delta (${pieces.length} deltas, ${released} chars released)\n`);
}

measure('plain prose', deltas(PROSE));
// Every ~250 chars an address and a phone number: the e-mail detector's "@" shortcut no longer applies and matches are redacted.
measure('prose with PII', deltas(`${PROSE}Mail ops@example.com or call 13800138000. `));
