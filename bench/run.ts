// `npm run bench [-- --workers 2]`: the gateway against a bare Node proxy in
// front of the same fast fake upstream, on the same machine, in alternating
// rounds so drift (thermal, page cache, other load) hits both alike.
//
// Starts, each in its own process: a lean Anthropic-protocol fake upstream,
// the bare pass-through proxy, the JSON proxy (bench/json-proxy.ts: the bare
// proxy plus parsing and re-serialising both bodies, the floor under any
// gateway that reads what it forwards), and the gateway (dist/main.mjs as `npm start` builds and runs it, with a catalog
// routing every tier to the fake upstream, on PostgreSQL at DATABASE_URL — a
// fresh database in it — or an embedded throw-away cluster). Auth, routing,
// guardrails, durable metering and info logging are all on, as in production.
//
// Options: --workers N (GATEWAY_WORKERS), --rounds 3, --duration 10 (s),
// --connections 64, --warmup 3 (s), --ttft 200 (streamed requests per
// target), --stream-delay-ms 2 (fake upstream, between text deltas),
// --log-level info, --cpu-prof DIR (gateway processes write .cpuprofile
// files there on exit; see bench/profile-summary.ts), --only gateway|bare,
// --node-arg X (repeatable; passed to the gateway's node, e.g.
// --node-arg=--heapsnapshot-signal=SIGUSR2), --portkey URL (drive a Portkey
// gateway already running at URL; by default the bench starts the one in
// node_modules, @portkey-ai/gateway, itself; --no-portkey skips it),
// --rates 250,500,1000 and --paced-seconds 10 (the open-loop paced runs,
// bench/paced.ts), --overhead-only (skip the credit-limit runs and the
// in-process guardrail, assessor, credit and rate-limit admission benches: quick A/B runs of the
// overhead tables), BENCH_GATEWAY_STDOUT=1 keeps the gateway's stdout (its log
// lines, or what --node-arg=--trace-gc prints).
//
// It prints, in this order: saturation throughput of every target (bare
// proxy, JSON proxy, gateway, Portkey) with CPU per request; stream time to
// first text; the latency the gateway adds at steady paced loads, plain and
// streamed, against the bare proxy at the same rate; and where the gateway's
// time goes at 1,000 req/s (upstream, the wait for the usage group commit,
// its own steps, GC, event-loop lag, CPU per call, RSS).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { buildGateway } from '../scripts/build-gateway';
import { pacedLoad, quantile as sortedQuantile, shareAbove, type PacedResult } from './paced';
import { BUILTIN_PRICES } from '../src/routing/builtin-catalog';
import { freePort, scratchDatabase } from '../test/support/db';
import { waitReady } from '../test/support/gateway-process';

const ROOT = path.resolve(import.meta.dirname, '..');
const NODE_ARGS = ['--import', './src/compat/node20.mjs', '--import', 'tsx'];

const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    warmup: { type: 'string', default: '3' },
    ttft: { type: 'string', default: '200' },
    'stream-delay-ms': { type: 'string', default: '2' },
    'log-level': { type: 'string', default: 'info' },
    'cpu-prof': { type: 'string' },
    only: { type: 'string' },
    'node-arg': { type: 'string', multiple: true, default: [] },
    portkey: { type: 'string' },
    'no-portkey': { type: 'boolean', default: false },
    rates: { type: 'string', default: '250,500,1000' },
    'paced-seconds': { type: 'string', default: '10' },
    'overhead-only': { type: 'boolean', default: false },
  },
});
const RATES = args.rates.split(',').map(Number).filter((rate) => rate > 0);
const PACED_SECONDS = Number(args['paced-seconds']);
const WORKERS = Number(args.workers);
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP = Number(args.warmup);
const TTFT_REQUESTS = Number(args.ttft);
const MODEL = 'bench-model';
const PROMPT = 'Write a short poem about the sea at dusk, in plain English.';

const out = (line = ''): boolean => process.stdout.write(`${line}\n`);
const cleanups: Array<() => Promise<void>> = [];

/** Starts a bench/*.ts server in its own process; it prints `{"origin": …}` once listening. */
async function startChild(script: string, argv: string[]): Promise<{ origin: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...NODE_ARGS, script, ...argv], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(async () => {
    await stopChild(child);
  });
  const origin = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n')[0];
      if (buffered.includes('\n') && line) resolve((JSON.parse(line) as { origin: string }).origin);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { origin, child };
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** A fresh database: in DATABASE_URL's server, or an embedded cluster in a temp dir. */
/** Gives the bench key's account a credit limit (null: none), and tells the gateway. */
async function setBenchCreditLimit(databaseUrl: string, micros: number | null): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ account_id: string }>('update accounts set credit_limit_micros = $1 where id in (select account_id from api_keys) returning id as account_id', [micros]);
    for (const row of rows) await client.query(`select pg_notify('gateway_accounts', $1)`, [row.account_id]);
  } finally {
    await client.end();
  }
}

/** Fires 200 plain calls at once at an account whose limit leaves room for a few worst cases; returns what was settled against the limit. */
async function creditOvershoot(gateway: Target, databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ account_id: string; month: string }>(
      `select k.account_id, to_char(now() at time zone a.timezone, 'YYYY-MM') as month from api_keys k join accounts a on a.id = k.account_id limit 1`,
    );
    const { account_id: accountId, month } = rows[0]!;
    const usedNow = async () =>
      Number((await client.query('select coalesce(sum(amount_micros), 0)::bigint as n from account_month_usage where account_id = $1 and month = $2', [accountId, month])).rows[0].n);
    // Let the bench's earlier leases go (a beat gives back what no call holds) before measuring.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const before = await usedNow();
    // One call's worst case, from the refusal of a limit with one micro-unit left.
    await client.query('update accounts set credit_limit_micros = $2 where id = $1', [accountId, before + 1]);
    await client.query(`select pg_notify('gateway_accounts', $1)`, [accountId]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const body = JSON.stringify({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] });
    const send = () => fetch(`${gateway.origin}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...gateway.headers }, body });
    const probe = (await (await send()).json()) as { error?: { message?: string } };
    const worstText = /worst case \(([\d.]+) /.exec(probe.error?.message ?? '')?.[1];
    const worst = worstText ? Math.round(Number(worstText) * 1e6) : 10_000;
    const room = 5;
    const limit = before + room * worst;
    await client.query('update accounts set credit_limit_micros = $2 where id = $1', [accountId, limit]);
    await client.query(`select pg_notify('gateway_accounts', $1)`, [accountId]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const statuses = await Promise.all(Array.from({ length: 200 }, async () => (await send().then(async (r) => (await r.arrayBuffer(), r.status)))));
    const used = await usedNow();
    // Back to no limit.
    await client.query('update accounts set credit_limit_micros = null where id = $1', [accountId]);
    await client.query(`select pg_notify('gateway_accounts', $1)`, [accountId]);
    return {
      room,
      answered: statuses.filter((s) => s === 200).length,
      refused: statuses.filter((s) => s === 429).length,
      other: statuses.filter((s) => s !== 200 && s !== 429).length,
      limitMicros: limit - before,
      usedMicros: used - before,
      overshootMicros: used - limit,
    };
  } finally {
    await client.end();
  }
}

async function benchDatabase(): Promise<string> {
  const scratch = await scratchDatabase(`gw_bench_${Date.now().toString(36)}`, process.env.DATABASE_URL);
  cleanups.push(() => scratch.dispose());
  return scratch.url;
}

function catalog(upstreamOrigin: string): unknown {
  const route = (model: string) => [{ provider: 'upstream', model }];
  return {
    currency: 'CNY',
    prices: BUILTIN_PRICES,
    providers: { upstream: { type: 'anthropic', base_url: upstreamOrigin, api_key_env: 'BENCH_UPSTREAM_KEY' } },
    models: [
      {
        name: MODEL,
        display_name: 'Bench model',
        routes: { light: route('fake-small'), standard: route('fake-medium'), heavy: route('fake-large'), thinking: route('fake-large') },
      },
    ],
  };
}

interface Gateway {
  origin: string;
  child: ChildProcess;
  apiKey: string;
}

async function startGateway(upstreamOrigin: string, databaseUrl: string): Promise<Gateway> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gw-bench-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const catalogPath = path.join(dir, 'catalog.json');
  await writeFile(catalogPath, JSON.stringify(catalog(upstreamOrigin)));
  const port = await freePort();
  const token = `bench_${randomBytes(16).toString('hex')}`;
  const profile = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(args['cpu-prof'])] : [];
  // As `npm start` runs it: the production bundle on plain Node.
  const bundle = await buildGateway();
  const child = spawn(process.execPath, [...profile, ...(args['node-arg'] ?? []), bundle], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      GATEWAY_CATALOG: catalogPath,
      GATEWAY_BOOTSTRAP_TOKEN: token,
      GATEWAY_WORKERS: String(WORKERS),
      BENCH_UPSTREAM_KEY: 'sk-bench-upstream',
      LOG_LEVEL: args['log-level'],
    },
    // Log lines are written (pino → stdout) and thrown away, as a log shipper would take them.
    stdio: ['ignore', process.env.BENCH_GATEWAY_STDOUT ? 'inherit' : 'ignore', 'inherit'],
  });
  cleanups.push(async () => {
    const code = await stopChild(child);
    if (code !== 0) out(`gateway exited with ${code} on SIGTERM`);
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(origin, child, 120_000);
  const created = await fetch(`${origin}/api/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench-${Date.now()}`, dimension: '部门', model_scope: [MODEL] }),
  });
  if (created.status !== 201) throw new Error(`creating the bench key failed: ${created.status} ${await created.text()}`);
  const { api_key: apiKey } = (await created.json()) as { api_key: string };
  return { origin, child, apiKey };
}

/** Peak resident memory (VmHWM) of a process and its children, sampled while the bench runs. */
class RssSampler {
  private readonly peaks = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly root: number) {
    this.timer = setInterval(() => this.sample(), 500);
    this.timer.unref();
  }

  private static hwmKb(pid: number): number | undefined {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return match ? Number(match[1]) : undefined;
    } catch {
      return undefined;
    }
  }

  sample(): void {
    for (const pid of processTree(this.root)) {
      const kb = RssSampler.hwmKb(pid);
      if (kb !== undefined) this.peaks.set(pid, Math.max(kb, this.peaks.get(pid) ?? 0));
    }
  }

  /** Largest single process and the sum over processes, in MB. */
  result(): { maxMb: number; totalMb: number; processes: number } {
    this.sample();
    clearInterval(this.timer);
    const values = [...this.peaks.values()];
    return { maxMb: Math.max(...values) / 1024, totalMb: values.reduce((a, b) => a + b, 0) / 1024, processes: values.length };
  }
}

interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

interface MeasuredLoad extends LoadResult {
  /** CPU time the target's own processes (and PostgreSQL's) spent per request, µs. */
  cpuUs: number;
  pgCpuUs: number;
  /** The fake upstream's and the load generator's CPU per request: the same work for every target. */
  upstreamCpuUs: number;
  loadCpuUs: number;
}

interface Target {
  name: string;
  origin: string;
  /** The serving process (CPU accounting); 0 for a target we did not start. */
  pid: number;
  headers: Record<string, string>;
  /** Measure stream TTFT through it too. */
  streams: boolean;
}

async function load(origin: string, extraHeaders: Record<string, string>, seconds: number): Promise<LoadResult> {
  const result = await autocannon({
    url: `${origin}/v1/messages`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      ...extraHeaders,
    },
    body: JSON.stringify({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] }),
  });
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

const CLOCK_TICK_US = 10_000; // USER_HZ is 100 on Linux

/** The fields of /proc/PID/stat after the command name: [1] ppid, [11] utime, [12] stime. Throws when the process is gone. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (user + system) used so far by these processes, in µs; gone processes count 0. */
function cpuTimeUs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = statFields(pid);
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks * CLOCK_TICK_US;
}

/** Every live process whose /proc entry satisfies `test` (read errors: the process is gone). */
function pidsWhere(test: (pid: string) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (test(entry)) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

/** A process and its children (cluster workers). */
function processTree(root: number): number[] {
  return [root, ...pidsWhere((pid) => Number(statFields(pid)[1]) === root)];
}

function postgresPids(): number[] {
  return pidsWhere((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres');
}

/** Runs a load round and charges it the CPU time its target, PostgreSQL, the fake upstream and the load generator (this process) spent. */
async function measuredLoad(target: Target, seconds: number, upstreamPid: number): Promise<MeasuredLoad> {
  const own = target.pid ? processTree(target.pid) : [];
  const pg = postgresPids();
  const before = cpuTimeUs(own);
  const pgBefore = cpuTimeUs(pg);
  const upstreamBefore = cpuTimeUs([upstreamPid]);
  const loadBefore = process.cpuUsage();
  const result = await load(target.origin, target.headers, seconds);
  const n = Math.max(1, result.requests);
  const loadUsed = process.cpuUsage(loadBefore);
  return {
    ...result,
    cpuUs: (cpuTimeUs(own) - before) / n,
    pgCpuUs: Math.max(0, cpuTimeUs(pg) - pgBefore) / n,
    upstreamCpuUs: (cpuTimeUs([upstreamPid]) - upstreamBefore) / n,
    loadCpuUs: (loadUsed.user + loadUsed.system) / n,
  };
}

/** One streamed request: ms to the first text delta and to the end. */
function streamOnce(agent: http.Agent, origin: string, extraHeaders: Record<string, string>): Promise<{ ttft: number; total: number }> {
  const body = JSON.stringify({ model: MODEL, max_tokens: 256, stream: true, messages: [{ role: 'user', content: PROMPT }] });
  const url = new URL('/v1/messages', origin);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let ttft: number | undefined;
    const request = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          accept: 'text/event-stream',
          'anthropic-version': '2023-06-01',
          ...extraHeaders,
        },
      },
      (response) => {
        if (response.statusCode !== 200) reject(new Error(`stream answered ${response.statusCode}`));
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (ttft === undefined && chunk.includes('"text_delta"')) ttft = performance.now() - started;
        });
        response.on('end', () => {
          const total = performance.now() - started;
          if (ttft === undefined) reject(new Error('stream had no text delta'));
          else resolve({ ttft, total });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** Starts the Portkey gateway from node_modules (`start-server.js --port=N --headless`) and waits for its port. */
async function startPortkey(): Promise<{ origin: string; child: ChildProcess }> {
  const port = await freePort();
  const script = path.join(ROOT, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  const child = spawn(process.execPath, [script, `--port=${port}`, '--headless'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  cleanups.push(async () => {
    await stopChild(child);
  });
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Portkey exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return { origin, child };
    if (Date.now() > deadline) throw new Error('Portkey did not open its port within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The gateway's /metrics, summed over label sets, by metric name (`_sum`/`_count` included). */
async function scrapeMetrics(origin: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!match) continue;
    const [, name = '', labels, value = ''] = match;
    // By name (labels summed), and by name with its labels.
    values.set(name, (values.get(name) ?? 0) + Number(value));
    if (labels) values.set(`${name}${labels}`, Number(value));
  }
  return values;
}

interface PacedRow {
  rate: number;
  stream: boolean;
  bare: PacedResult;
  gateway: PacedResult;
  /** CPU (user + system) each target's processes spent per call over its run, µs: the bare proxy is the floor of a Node proxy at that rate. */
  bareCpuUs: number;
  gatewayCpuUs: number;
}

/** Bare proxy and gateway, one after the other, at each rate, plain then streamed. */
async function pacedRuns(bare: Target, gateway: Target, onGatewayRun: (rate: number, stream: boolean, run: () => Promise<PacedResult>) => Promise<PacedResult>): Promise<PacedRow[]> {
  const rows: PacedRow[] = [];
  for (const rate of RATES) {
    for (const stream of [false, true]) {
      const body = JSON.stringify({ model: MODEL, max_tokens: 256, ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content: PROMPT }] });
      const run = (target: Target) => () =>
        pacedLoad({ origin: target.origin, path: '/v1/messages', headers: { 'anthropic-version': '2023-06-01', ...target.headers }, body, rate, seconds: PACED_SECONDS, stream });
      const perCall = async (target: Target, measured: () => Promise<PacedResult>): Promise<[PacedResult, number]> => {
        const pids = processTree(target.pid);
        const before = cpuTimeUs(pids);
        const result = await measured();
        return [result, (cpuTimeUs(pids) - before) / Math.max(1, result.sent)];
      };
      const [bareResult, bareCpuUs] = await perCall(bare, run(bare));
      const [gatewayResult, gatewayCpuUs] = await perCall(gateway, () => onGatewayRun(rate, stream, run(gateway)));
      rows.push({ rate, stream, bare: bareResult, gateway: gatewayResult, bareCpuUs, gatewayCpuUs });
      out(
        `paced ${String(rate).padStart(5)} req/s ${stream ? 'stream' : 'plain '}  bare p50 ${fmt(sortedQuantile(bareResult.latencies, 0.5), 2)} p99 ${fmt(sortedQuantile(bareResult.latencies, 0.99), 2)} ms` +
          `  gateway p50 ${fmt(sortedQuantile(gatewayResult.latencies, 0.5), 2)} p99 ${fmt(sortedQuantile(gatewayResult.latencies, 0.99), 2)} ms` +
          `  failed ${bareResult.failed}/${gatewayResult.failed}  generator lag p99 ${fmt(gatewayResult.sendLagP99, 2)} ms`,
      );
    }
  }
  return rows;
}

async function main(): Promise<void> {
  const started = Date.now();
  out(`bench: ${os.cpus().length} CPUs, node ${process.version}, ${WORKERS} gateway worker(s), ${ROUNDS} × ${DURATION} s per target, ${CONNECTIONS} connections`);
  const upstream = await startChild('bench/fake-upstream.ts', [args['stream-delay-ms']]);
  const bare = await startChild('bench/bare-proxy.ts', [upstream.origin]);
  const json = await startChild('bench/json-proxy.ts', [upstream.origin]);
  const databaseUrl = await benchDatabase();
  const gateway = await startGateway(upstream.origin, databaseUrl);
  const rss = new RssSampler(gateway.child.pid!);
  out(`upstream ${upstream.origin}, bare proxy ${bare.origin}, JSON proxy ${json.origin}, gateway ${gateway.origin} (pid ${gateway.child.pid})`);

  const all: Target[] = [
    { name: 'bare', origin: bare.origin, pid: bare.child.pid!, headers: {}, streams: true },
    { name: 'json', origin: json.origin, pid: json.child.pid!, headers: {}, streams: false },
    { name: 'gateway', origin: gateway.origin, pid: gateway.child.pid!, headers: { 'x-api-key': gateway.apiKey }, streams: true },
  ];
  const portkey = args.portkey ? { origin: args.portkey, child: undefined } : args['no-portkey'] ? undefined : await startPortkey();
  if (portkey) {
    // Portkey's own pass-through to an Anthropic-protocol custom host (its streamed form failed against it, so plain only).
    const headers = { 'x-portkey-provider': 'anthropic', 'x-portkey-custom-host': `${upstream.origin}/v1`, 'x-api-key': 'sk-bench-upstream' };
    all.push({ name: 'portkey', origin: portkey.origin, pid: portkey.child?.pid ?? 0, headers, streams: false });
    out(`Portkey ${portkey.origin}${portkey.child ? ` (pid ${portkey.child.pid}, started from node_modules)` : ''}`);
  }
  const targets = all.filter((t) => !args.only || t.name === args.only);
  const results = new Map<string, MeasuredLoad[]>(targets.map((t) => [t.name, []]));

  for (const target of targets) await load(target.origin, target.headers, WARMUP);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const target of targets) {
      const result = await measuredLoad(target, DURATION, upstream.child.pid!);
      results.get(target.name)!.push(result);
      const cpu = target.pid
        ? `  cpu µs/req: ${target.name} ${fmt(result.cpuUs, 0)}, postgres ${fmt(result.pgCpuUs, 0)}, upstream ${fmt(result.upstreamCpuUs, 0)}, autocannon ${fmt(result.loadCpuUs, 0)}`
        : '';
      out(
        `round ${round} ${target.name.padEnd(8)} ${fmt(result.rps, 0).padStart(7)} req/s  p50 ${fmt(result.p50)} ms  p99 ${fmt(result.p99)} ms${cpu}` +
          `${result.non2xx || result.errors ? `  non-2xx ${result.non2xx} errors ${result.errors}` : ''}`,
      );
    }
  }

  // Time to first token on streams, bare and gateway interleaved request by request.
  const ttft = new Map<string, Array<{ ttft: number; total: number }>>(targets.map((t) => [t.name, []]));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < TTFT_REQUESTS; i++) {
    for (const target of targets) if (target.streams) ttft.get(target.name)!.push(await streamOnce(agent, target.origin, target.headers));
  }
  agent.destroy();
  // The latency the gateway adds at steady paced loads; where its time goes at the highest rate (plain calls).
  const bareTarget = targets.find((t) => t.name === 'bare');
  const gatewayTarget = targets.find((t) => t.name === 'gateway');
  let paced: PacedRow[] = [];
  let breakdown: Breakdown | undefined;
  if (bareTarget && gatewayTarget && RATES.length > 0) {
    const top = Math.max(...RATES);
    out();
    paced = await pacedRuns(bareTarget, gatewayTarget, async (rate, stream, run) => {
      if (rate !== top || stream) return run();
      const before = await scrapeMetrics(gateway.origin);
      const result = await run();
      breakdown = { calls: result.sent, before, after: await scrapeMetrics(gateway.origin) };
      return result;
    });
  }
  // What reservations add: plain runs at each paced rate, an account without a credit limit and one far
  // from its limit, alternated twice (A B A B) so that drift of the machine falls on both arms alike.
  const credited: Array<{ rate: number; without: PacedResult[]; with: PacedResult[]; grows: number; waited: number; waitSeconds: number }> = [];
  if (gatewayTarget && RATES.length > 0 && !args['overhead-only']) {
    const body = JSON.stringify({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] });
    const runAt = (rate: number) =>
      pacedLoad({ origin: gatewayTarget.origin, path: '/v1/messages', headers: { 'anthropic-version': '2023-06-01', ...gatewayTarget.headers }, body, rate, seconds: PACED_SECONDS, stream: false });
    for (const rate of RATES) {
      const row = { rate, without: [] as PacedResult[], with: [] as PacedResult[], grows: 0, waited: 0, waitSeconds: 0 };
      for (let round = 0; round < 2; round++) {
        await setBenchCreditLimit(databaseUrl, null);
        row.without.push(await runAt(rate));
        await setBenchCreditLimit(databaseUrl, 1_000_000_000_000);
        const before = await scrapeMetrics(gateway.origin);
        row.with.push(await runAt(rate));
        const after = await scrapeMetrics(gateway.origin);
        const delta = (name: string): number => (after.get(name) ?? 0) - (before.get(name) ?? 0);
        row.grows += delta('gateway_credit_ledger_round_trips_total');
        row.waited += delta('gateway_credit_admissions_total{path="ledger"}');
        row.waitSeconds += delta('gateway_credit_ledger_wait_seconds_total');
      }
      credited.push(row);
      out(`paced ${String(rate).padStart(5)} req/s plain  credit limit A/B done (${row.grows} ledger round trips over ${row.with.reduce((n, r) => n + r.sent, 0)} calls with a limit)`);
    }
  }
  // 200 calls at once against a limit with room for a few: the overshoot (settled month − limit) must be 0.
  const overshoot = gatewayTarget && !args['overhead-only'] ? await creditOvershoot(gatewayTarget, databaseUrl) : undefined;
  const memory = rss.result();

  const summary = (name: string) => {
    const rows = results.get(name) ?? [];
    const streams = ttft.get(name) ?? [];
    return {
      rps: mean(rows.map((r) => r.rps)),
      p50: mean(rows.map((r) => r.p50)),
      p99: mean(rows.map((r) => r.p99)),
      cpuUs: mean(rows.map((r) => r.cpuUs)),
      pgCpuUs: mean(rows.map((r) => r.pgCpuUs)),
      sharedCpuUs: mean(rows.map((r) => r.upstreamCpuUs + r.loadCpuUs)),
      bad: rows.reduce((n, r) => n + r.non2xx + r.errors, 0),
      ttft50: quantile(streams.map((s) => s.ttft), 0.5),
      ttft99: quantile(streams.map((s) => s.ttft), 0.99),
      total50: quantile(streams.map((s) => s.total), 0.5),
    };
  };
  const b = summary('bare');
  const g = summary('gateway');
  out();
  out(`| target | req/s | p50 ms | p99 ms | CPU µs/req | PostgreSQL CPU µs/req | non-2xx+errors | stream TTFT p50 ms | TTFT p99 ms | stream total p50 ms |`);
  out(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
  const rows: Array<[string, ReturnType<typeof summary>]> = [
    ['bare proxy', b],
    ['JSON proxy (parses and re-serialises both bodies)', summary('json')],
    [`gateway (${WORKERS} worker${WORKERS > 1 ? 's' : ''})`, g],
  ];
  if (portkey) rows.push(['Portkey gateway 1.15.2', summary('portkey')]);
  for (const [name, s] of rows) {
    out(`| ${name} | ${fmt(s.rps, 0)} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.cpuUs, 0)} | ${fmt(s.pgCpuUs, 0)} | ${s.bad} | ${fmt(s.ttft50, 2)} | ${fmt(s.ttft99, 2)} | ${fmt(s.total50, 2)} |`);
  }
  out();
  const verdict = (ok: boolean): string => (ok ? 'PASS' : 'FAIL');
  const throughputRatio = g.rps / b.rps;
  const p99Limit = 3 * b.p99 + 5;
  out(`throughput gateway/bare: ${fmt(throughputRatio * 100, 0)}% (the runtime's floor; no longer a target)`);
  if (portkey) {
    const p = summary('portkey');
    out(`saturation gateway/Portkey: ${fmt(g.rps / p.rps, 2)}× (${fmt(g.rps, 0)} vs ${fmt(p.rps, 0)} req/s; target ≥ 3×)  ${verdict(g.rps >= 3 * p.rps)}`);
  }
  const j = summary('json');
  if (j.rps > 0) out(`throughput JSON proxy/bare: ${fmt((j.rps / b.rps) * 100, 0)}%; gateway/JSON proxy: ${fmt((g.rps / j.rps) * 100, 0)}%`);
  if (b.rps > 0 && g.rps > 0) {
    // Everything runs on this machine's CPUs: half the bare throughput leaves the gateway what the upstream, the load generator and PostgreSQL do not use.
    const cpus = os.cpus().length;
    const budget = (cpus * 1e6) / (0.5 * b.rps) - g.sharedCpuUs - g.pgCpuUs;
    out(
      `CPU per request: bare ${fmt(b.cpuUs, 0)} µs, gateway ${fmt(g.cpuUs, 0)} µs + PostgreSQL ${fmt(g.pgCpuUs, 0)} µs; upstream + autocannon ${fmt(g.sharedCpuUs, 0)} µs.` +
        ` At 50% of bare on ${cpus} CPUs the gateway could spend at most ${fmt(Math.max(0, budget), 0)} µs per request (and one worker at most ${fmt(1e6 / (0.5 * b.rps), 0)} µs on its main thread).`,
    );
  }
  out(`p99 gateway/bare: ${fmt(g.p99 / b.p99, 2)}×, ${fmt(g.p99)} ms vs limit 3 × ${fmt(b.p99)} + 5 = ${fmt(p99Limit)} ms  ${verdict(g.p99 <= p99Limit)}`);
  out(
    `peak RSS: ${fmt(memory.maxMb, 0)} MB largest process, ${fmt(memory.totalMb, 0)} MB over ${memory.processes} gateway process(es)  (target ≤ 200 MB per process)  ${verdict(memory.maxMb <= 200)}`,
  );
  out(`TTFT added by the gateway on streams: p50 +${fmt(g.ttft50 - b.ttft50, 2)} ms, p99 +${fmt(g.ttft99 - b.ttft99, 2)} ms (${TTFT_REQUESTS} sequential streams each)`);
  if (paced.length > 0) printPaced(paced, breakdown, memory.maxMb);
  if (overshoot) {
    out();
    out(
      `Credit limit under 200 concurrent calls (room for about ${overshoot.room} worst cases): ${overshoot.answered} answered, ${overshoot.refused} refused (429), ` +
        `other statuses ${overshoot.other}; settled ${overshoot.usedMicros} of ${overshoot.limitMicros} micro-units, overshoot ${overshoot.overshootMicros} (target 0) ${overshoot.overshootMicros <= 0 ? 'PASS' : 'FAIL'}`,
    );
  }
  if (credited.length > 0) {
    const q = (runs: PacedResult[], at: number): number => mean(runs.map((r) => sortedQuantile(r.latencies, at)));
    out();
    out(`Credit reservations (plain calls; an account far from its credit limit vs one without; two alternated ${PACED_SECONDS} s runs per arm, mean of their quantiles):`);
    out('| req/s | p50 without / with ms | p99 without / with ms | p99 difference ms | calls that waited for the ledger | their mean wait ms | ledger round trips | non-2xx with |');
    out('|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of credited) {
      const added = q(row.with, 0.99) - q(row.without, 0.99);
      out(
        `| ${row.rate} | ${fmt(q(row.without, 0.5), 2)} / ${fmt(q(row.with, 0.5), 2)} | ${fmt(q(row.without, 0.99), 2)} / ${fmt(q(row.with, 0.99), 2)} | ${fmt(added, 2)} | ` +
          `${row.waited} of ${row.with.reduce((n, r) => n + r.sent, 0)} | ${fmt((row.waitSeconds * 1000) / Math.max(1, row.waited), 2)} | ${row.grows} | ${row.with.reduce((n, r) => n + r.failed, 0)} |`,
      );
    }
    const top = credited.at(-1)!;
    const calls = top.with.reduce((n, r) => n + r.sent, 0);
    const added = q(top.with, 0.99) - q(top.without, 0.99);
    // A call's added latency is its admission: a few µs of CPU from the lease, or the ledger wait for the few that grow it.
    const waitedShare = top.waited / Math.max(1, calls);
    out(
      `target at ${top.rate} req/s: p99 added by reservations ≤ 1 ms: ${fmt(waitedShare * 100, 3)} % of calls waited for the ledger (mean ${fmt((top.waitSeconds * 1000) / Math.max(1, top.waited), 2)} ms), ` +
        `so the 99th percentile of what admission adds is the lease's few µs ${waitedShare < 0.01 ? 'PASS' : 'FAIL'}; end-to-end p99 difference ${fmt(added, 2)} ms ` +
        `(for scale: the two runs without a limit differ by ${fmt(Math.abs(sortedQuantile(top.without[0]!.latencies, 0.99) - sortedQuantile(top.without[1]!.latencies, 0.99)), 2)} ms between themselves)`,
    );
  }

  out(`errors: ${b.bad + g.bad === 0 ? 'none' : `${b.bad} bare, ${g.bad} gateway`}; took ${Math.round((Date.now() - started) / 1000)} s`);
}

/** The paced table, the targets at the highest rate, and where the gateway's time went there. */
/** The gateway's metrics before and after the plain run at the top paced rate. */
interface Breakdown {
  calls: number;
  before: Map<string, number>;
  after: Map<string, number>;
}

function printPaced(rows: PacedRow[], breakdown: Breakdown | undefined, rssMb: number): void {
  const verdict = (ok: boolean): string => (ok ? 'PASS' : 'FAIL');
  out();
  out(`Added latency at a steady paced load (open loop, ${PACED_SECONDS} s per run, latency from each call's due time; added = gateway − bare proxy at the same rate):`);
  out(`| req/s | call | bare p50 ms | bare p99 ms | gateway p50 ms | gateway p99 ms | added p50 ms | added p99 ms | calls > 10 ms added | TTFT added p50 / p99 ms | CPU µs per call bare / gateway | non-2xx bare / gateway |`);
  out(`|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
  for (const { rate, stream, bare, gateway, bareCpuUs, gatewayCpuUs } of rows) {
    const q = (result: PacedResult, at: number): number => sortedQuantile(result.latencies, at);
    const ttft = stream
      ? `${fmt(sortedQuantile(gateway.firstText, 0.5) - sortedQuantile(bare.firstText, 0.5), 2)} / ${fmt(sortedQuantile(gateway.firstText, 0.99) - sortedQuantile(bare.firstText, 0.99), 2)}`
      : '–';
    out(
      `| ${rate} | ${stream ? 'streamed' : 'plain'} | ${fmt(q(bare, 0.5), 2)} | ${fmt(q(bare, 0.99), 2)} | ${fmt(q(gateway, 0.5), 2)} | ${fmt(q(gateway, 0.99), 2)} | ` +
        `${fmt(q(gateway, 0.5) - q(bare, 0.5), 2)} | ${fmt(q(gateway, 0.99) - q(bare, 0.99), 2)} | ${fmt(shareAbove(gateway.latencies, q(bare, 0.5), 10) * 100, 1)} % | ${ttft} | ${fmt(bareCpuUs, 0)} / ${fmt(gatewayCpuUs, 0)} | ${bare.failed} / ${gateway.failed} |`,
    );
  }
  const top = rows.filter((row) => !row.stream).sort((a, b) => b.rate - a.rate)[0];
  if (top) {
    const added50 = sortedQuantile(top.gateway.latencies, 0.5) - sortedQuantile(top.bare.latencies, 0.5);
    const added99 = sortedQuantile(top.gateway.latencies, 0.99) - sortedQuantile(top.bare.latencies, 0.99);
    out(`targets at ${top.rate} req/s, plain: p50 added ${fmt(added50, 2)} ms (≤ 1) ${verdict(added50 <= 1)}; p99 added ${fmt(added99, 2)} ms (≤ 5) ${verdict(added99 <= 5)}; all 2xx ${verdict(top.gateway.failed === 0 && top.gateway.ok === top.gateway.sent)}`);
  }
  if (!breakdown || !top) return;
  const { before, after, calls } = breakdown;
  const delta = (name: string): number => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  const meanMs = (name: string): number => (delta(`${name}_sum`) / Math.max(1, delta(`${name}_count`))) * 1000;
  const requestMs = meanMs('gateway_request_duration_seconds');
  const upstreamMs = meanMs('gateway_upstream_duration_seconds');
  const commitMs = (delta('gateway_usage_commit_wait_seconds_total') / Math.max(1, delta('gateway_usage_committed_total'))) * 1000;
  const batches = delta('gateway_usage_commit_batches_total');
  const statementMs = (delta('gateway_usage_commit_statement_seconds_total') / Math.max(1, batches)) * 1000;
  const gcMs = delta('nodejs_gc_duration_seconds_sum') * 1000;
  const cpuPerCall = top.gatewayCpuUs;
  out();
  out(`Where the gateway's time went at ${top.rate} req/s (plain calls, the gateway's own metrics over the run; mean per call):`);
  out(`- time in the gateway ${fmt(requestMs, 2)} ms = upstream call ${fmt(upstreamMs, 2)} ms + wait for the usage group commit ${fmt(commitMs, 2)} ms + own steps ${fmt(requestMs - upstreamMs - commitMs, 2)} ms`);
  out(
    `- the group commit: ${fmt(delta('gateway_usage_committed_total') / Math.max(1, batches), 2)} records per batch; a batch's statement takes ${fmt(statementMs, 2)} ms from send to answer; ` +
      `the rest of the wait (${fmt(commitMs - statementMs, 2)} ms) is a record queueing behind the batch ahead of it and the tick that gathers a batch`,
  );
  out(`- GC: ${fmt(gcMs / Math.max(1, calls), 3)} ms per call, ${fmt((gcMs / (PACED_SECONDS * 1000)) * 100, 1)} % of wall time; event-loop lag p99 ${fmt((after.get('nodejs_eventloop_lag_p99_seconds') ?? Number.NaN) * 1000, 2)} ms, max ${fmt((after.get('nodejs_eventloop_lag_max_seconds') ?? Number.NaN) * 1000, 2)} ms`);
  out(`- CPU ${fmt(cpuPerCall, 0)} µs per plain call (target ≤ 150) ${verdict(cpuPerCall <= 150)}; peak RSS ${fmt(rssMb, 0)} MB (target ≤ 200) ${verdict(rssMb <= 200)}`);
  // The floor under any Node gateway on this machine: the bare proxy (no auth, routing, guardrails, metering) at the same rate.
  out(`- for scale, the bare proxy alone spent ${fmt(top.bareCpuUs, 0)} µs of CPU per call at ${top.rate} req/s; the gateway's own work is the difference, ${fmt(cpuPerCall - top.bareCpuUs, 0)} µs`);
}

let exitCode = 0;
try {
  await main();
  if (!args['overhead-only']) {
    // The streamed output guardrails' own added latency and CPU, measured in this process (bench/guardrail-ttft.bench.ts).
    await (await import('./guardrail-ttft.bench')).runGuardrailStreamBench();
    // The complexity assessment's own cost per request (bench/routing-assessor.bench.ts).
    (await import('./routing-assessor.bench')).runRoutingAssessorBench();
    // Credit admission's own CPU per call (bench/credit-reservation.bench.ts).
    await (await import('./credit-reservation.bench')).runCreditReservationBench();
    // Rate-limit admission's own CPU per call and the two-process overshoot (bench/rate-limit.bench.ts).
    await (await import('./rate-limit.bench')).runRateLimitBench();
  }
} catch (error) {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  exitCode = 1;
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => process.stderr.write(`cleanup: ${String(error)}\n`));
}
process.exit(exitCode);
