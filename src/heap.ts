// V8 grows the heap by up to 4× its live size between full collections, so
// under load an idle-sized gateway (~50 MB live) swells to 270–300 MB of RSS
// of which most is garbage. A small growth factor keeps RSS near 200 MB, but
// each step costs a full collection (5–20 ms of pause plus incremental
// marking on the event loop): at 15% one came every ~4 s at 250 req/s and
// set the p99 (16–72 ms added in six runs on 2026-11-27, median ~19). 30%
// halves how often they come for ~3 MB more (peak RSS 205–209 MB against
// 201–208, p99 added 5.7–34 ms, median ~10, in four runs alternated with
// 15%); V8's own growth gave 5–47 ms (median ~6) at 266–285 MB. Unlike a
// hard `--max-old-space-size` it never stops the process: a burst of 20 MB
// bodies still gets the memory it needs (bounded by the body budget, see
// src/http/body-budget.ts). Set at start-up; V8 reads the factor at every
// collection. GATEWAY_HEAP_GROWTH_PERCENT=0 leaves V8's default.
import v8 from 'node:v8';

export const DEFAULT_HEAP_GROWTH_PERCENT = 30;

export function tuneHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
