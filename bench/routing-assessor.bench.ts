// What the complexity assessment costs per request (issue: ≤ 20 µs at the
// 95th percentile): every request of the labelled routing corpus (chats,
// follow-ups, long pastes, agent turns in the bodies Claude Code, Codex and
// LangChain send, with their system prompts, tools and preambles) assessed in five warm batches, each request's median
// batch kept, so that a batch the machine's other work preempted does not
// count as assessment cost (benchAssessment in scripts/eval-routing.ts).
// `npm run bench` calls runRoutingAssessorBench() at its end; run alone:
// node --import ./src/compat/node20.mjs --import tsx bench/routing-assessor.bench.ts
import { pathToFileURL } from 'node:url';
import { benchAssessment } from '../scripts/eval-routing';
import { loadCorpus, toRequest } from '../scripts/routing-corpus';

const TARGET_P95_US = 20;

export function runRoutingAssessorBench(): void {
  const requests = loadCorpus().map(toRequest);
  const timing = benchAssessment(requests);
  const verdict = timing.p95 <= TARGET_P95_US ? '✔' : '✘';
  process.stdout.write(
    `\nComplexity assessment per request (${requests.length} corpus requests, warm): p50 ${timing.p50.toFixed(1)} µs, p95 ${timing.p95.toFixed(1)} µs ${verdict} (target ≤ ${TARGET_P95_US}), max ${timing.max.toFixed(1)} µs\n`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) runRoutingAssessorBench();
