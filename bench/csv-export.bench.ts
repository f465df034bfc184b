// Memory of the usage CSV export (docs/architecture.md §7: streamed, no whole-month
// buffering). Seeds BENCH_ROWS (default 1,000,000) usage rows with SQL into a
// fresh database — a new database on DATABASE_URL, or a throw-away embedded
// PostgreSQL when unset — and streams GET /api/v1/usage/export through the
// real app twice, read by a client in another process:
//   1. with a full GC every 500 ms: the heap the export holds on to
//      (retained_heap_growth_mb) and RSS growth — both must stay flat;
//   2. with V8's own GC pacing, as a server runs: time, peak RSS and heap
//      growth (reported; V8 collects the short-lived garbage lazily).
//
//   node --import ./src/compat/node20.mjs --import tsx bench/csv-export.bench.ts
//   BENCH_ROWS=200000 node --import ./src/compat/node20.mjs --import tsx bench/csv-export.bench.ts
//
// Exits 1 when a row is missing, pass 1's RSS grows more than
// BENCH_MAX_RSS_GROWTH_MB (default 100) or its retained heap more than
// BENCH_MAX_RETAINED_MB (default 32).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createAccount, createKey, startTestApp } from '../test/support/app';
import { closeTestDatabase, testDatabase } from '../test/support/db';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const MAX_GROWTH_MB = Number(process.env.BENCH_MAX_RSS_GROWTH_MB ?? 100);
const MAX_RETAINED_MB = Number(process.env.BENCH_MAX_RETAINED_MB ?? 32);
const SEED_CHUNK = 100_000;
const MB = 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Reads the export in another Node process (so only the gateway's memory is measured here), counting bytes and lines. */
const CLIENT = `
const started = performance.now();
const response = await fetch(process.env.EXPORT_URL, { headers: { authorization: 'Bearer ' + process.env.EXPORT_TOKEN } });
let bytes = 0, lines = 0, firstByteMs = 0;
for await (const chunk of response.body) {
  if (bytes === 0) firstByteMs = performance.now() - started;
  bytes += chunk.byteLength;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
}
process.stdout.write(JSON.stringify({ status: response.status, bytes, lines, firstByteMs }));
`;

function download(url: string, token: string): Promise<{ status: number; bytes: number; lines: number; firstByteMs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CLIENT], {
      env: { ...process.env, EXPORT_URL: url, EXPORT_TOKEN: token },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`export client exited with ${code}`))));
  });
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<number> {
  const t = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
  try {
    const owner = await createAccount(t, { timezone: 'UTC' });
    const keys = [(await createKey(t, owner.token)).api_key_id as string, (await createKey(t, owner.token)).api_key_id as string];
    const { pool } = await testDatabase();

    const seedStarted = performance.now();
    // Rows over the last few hours (microsecond timestamps), two keys, both price classes.
    for (let from = 1; from <= ROWS; from += SEED_CHUNK) {
      const to = Math.min(ROWS, from + SEED_CHUNK - 1);
      await pool.query(
        `insert into usage_records (id, request_id, account_id, api_key_id, form, model, routed_model, provider, route_tier, route_score,
           route_reasons, thinking, stream, status, error_code, price_tier, raw_input_cache_hit, raw_input_cache_miss, raw_output,
           tokens_input_cache_hit, tokens_input_cache_miss, tokens_output, amount_input_cache_hit, amount_input_cache_miss, amount_output,
           total_tokens, amount_micros, guardrail_hits, latency_ms, ttft_ms, created_at)
         select 'use_bench' || lpad(g::text, 8, '0'), 'req_bench' || lpad(g::text, 8, '0'), $1, case when g % 3 = 0 then $3 else $2 end,
           case when g % 2 = 0 then 'messages' else 'chat_completions' end, 'tsxt-general', 'sim-medium', 'sim', 'standard', 0.5,
           '[]', g % 5 = 0, g % 2 = 1, 'ok', null, case when g % 5 = 0 then 'thinking' else 'no_thinking' end, hit, miss, out,
           hit, miss, out, hit, miss * 2, out * 8, hit + miss + out, hit + miss * 2 + out * 8, '{}', 20, 10,
           now() - interval '1 minute' - g * interval '10037 microseconds'
         from generate_series($4::int, $5::int) as g, lateral (select g % 50 as hit, 100 + g % 17 as miss, 20 + g % 13 as out) as v`,
        [owner.accountId, keys[0], keys[1], from, to],
      );
    }
    await pool.query('analyze usage_records');
    const seedMs = performance.now() - seedStarted;
    say(`seeded ${ROWS.toLocaleString('en')} rows in ${(seedMs / 1000).toFixed(1)} s`);

    const span = await pool.query<{ first: Date; last: Date }>(
      'select min(created_at) as first, max(created_at) as last from usage_records where account_id = $1',
      [owner.accountId],
    );
    const start = span.rows[0]!.first.toISOString().slice(0, 10);
    const end = span.rows[0]!.last.toISOString().slice(0, 10);

    const url = `${t.baseUrl}/api/v1/usage/export?start=${start}&end=${end}`;

    /** One export, read by a client in another process, so only the gateway's memory is measured here. */
    async function pass(forceGc: boolean) {
      gc();
      const baseline = process.memoryUsage();
      let peakRss = baseline.rss;
      let peakHeap = baseline.heapUsed;
      let peakRetained = baseline.heapUsed;
      const sample = () => {
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        peakHeap = Math.max(peakHeap, m.heapUsed);
      };
      const sampler = setInterval(sample, 20);
      // What is still referenced: the heap right after a full collection.
      const collector = forceGc
        ? setInterval(() => {
            gc();
            peakRetained = Math.max(peakRetained, process.memoryUsage().heapUsed);
          }, 500)
        : undefined;
      const started = performance.now();
      const client = await download(url, owner.token);
      const totalMs = performance.now() - started;
      clearInterval(sampler);
      clearInterval(collector);
      sample();
      if (client.status !== 200) throw new Error(`export answered ${client.status}`);
      const rows = client.lines - 1;
      return {
        rows,
        export_mb: Number((client.bytes / MB).toFixed(1)),
        first_byte_ms: Math.round(client.firstByteMs),
        total_s: Number((totalMs / 1000).toFixed(2)),
        rows_per_s: Math.round(rows / (totalMs / 1000)),
        rss_baseline_mb: Number((baseline.rss / MB).toFixed(1)),
        rss_peak_mb: Number((peakRss / MB).toFixed(1)),
        rss_growth_mb: Number(((peakRss - baseline.rss) / MB).toFixed(1)),
        heap_growth_mb: Number(((peakHeap - baseline.heapUsed) / MB).toFixed(1)),
        ...(forceGc ? { retained_heap_growth_mb: Number(((peakRetained - baseline.heapUsed) / MB).toFixed(1)) } : {}),
      };
    }

    // 1. With a full GC every 500 ms: the memory the export actually holds on to.
    //    (First: RSS seldom shrinks, so a pass after the other would start from its peak.)
    const retained = await pass(true);
    say(`export, full GC every 500 ms: ${JSON.stringify(retained, null, 2)}`);
    // 2. As a server runs it (V8's own GC pacing): time and peak RSS growth.
    const natural = await pass(false);
    say(`export, default GC: ${JSON.stringify(natural, null, 2)}`);

    let failed = false;
    for (const report of [natural, retained]) {
      if (report.rows !== ROWS) {
        say(`FAIL: exported ${report.rows} rows, seeded ${ROWS}`);
        failed = true;
      }
    }
    if (retained.rss_growth_mb > MAX_GROWTH_MB) {
      say(`FAIL: RSS grew ${retained.rss_growth_mb} MB while streaming (limit ${MAX_GROWTH_MB} MB)`);
      failed = true;
    }
    if ((retained.retained_heap_growth_mb ?? 0) > MAX_RETAINED_MB) {
      say(`FAIL: the export held on to ${retained.retained_heap_growth_mb} MB of heap (limit ${MAX_RETAINED_MB} MB)`);
      failed = true;
    }
    if (natural.rss_growth_mb > MAX_GROWTH_MB) {
      say(
        `note: with V8's default pacing RSS peaked ${natural.rss_growth_mb} MB above baseline: short-lived garbage that V8 ` +
          `collects lazily (see the retained figure), not buffered rows; cap it with --max-old-space-size if it matters.`,
      );
    }
    if (!failed) say('ok: the export streamed in flat memory');
    return failed ? 1 : 0;
  } finally {
    await t.close();
    await closeTestDatabase();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
