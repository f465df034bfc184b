// V8 grows the heap by up to 4× its live size between full collections, so
// under load a gateway with a small live heap swells to several times that
// in RSS, most of it garbage. A small growth factor keeps RSS low, but each
// step costs a full collection (a pause plus incremental marking on the
// event loop), and under steady load those pauses set the p99: the smaller
// the factor, the more often they come. The default is the factor where the
// bench found more memory buying little more tail latency (the runs are in
// the README, Benchmarks). Unlike a
// hard `--max-old-space-size` it never stops the process: a burst of 20 MB
// bodies still gets the memory it needs (bounded by the body budget, see
// src/http/body-budget.ts). Set at start-up; V8 reads the factor at every
// collection. GATEWAY_HEAP_GROWTH_PERCENT=0 leaves V8's default.
import v8 from 'node:v8';

export const DEFAULT_HEAP_GROWTH_PERCENT = 30;

export function tuneHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
