// V8 grows the heap by up to 4× its live size between full collections, so
// under load an idle-sized gateway (~50 MB live) swells to 300 MB of RSS of
// which most is garbage. Growing by 15% instead keeps it under 200 MB in
// `npm run bench` at no measurable throughput cost (20% peaked at 196–202 MB
// depending on how busy the machine was, 15% at 196 MB in the same runs),
// and unlike a hard `--max-old-space-size` it never stops the process: a
// burst of 20 MB bodies still gets the memory it needs (bounded by the body
// budget, see src/http/body-budget.ts). Set at start-up; V8 reads the factor
// at every collection. GATEWAY_HEAP_GROWTH_PERCENT=0 leaves V8's default.
import v8 from 'node:v8';

export const DEFAULT_HEAP_GROWTH_PERCENT = 15;

export function tuneHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
