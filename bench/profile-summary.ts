// Sums self time per function and per file from V8 .cpuprofile files
// (`node --cpu-prof`, or `npm run bench -- --cpu-prof DIR`), so what
// dominates the gateway's per-request cost is readable without a GUI.
// Run: node --import tsx bench/profile-summary.ts DIR_OR_FILE... [--top 40] [--skip SECONDS]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' }, skip: { type: 'string', default: '0' } },
});
const top = Number(values.top);
// Seconds at the start of each profile to leave out (start-up: module loading, schema compilation).
const skipUs = Number(values.skip) * 1e6;

const files = positionals.flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(p, f))
    : [p],
);

const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
const byPackage = new Map<string, number>();
let total = 0;

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) return url.slice(modules + 'node_modules/'.length);
  const src = url.indexOf('/src/');
  if (src !== -1) return url.slice(src + 1);
  return url.replace(/^file:\/\//, '') || '(native)';
}

function packageOf(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.includes('/src/')) return `src/${url.split('/src/')[1]!.split('/')[0]}`;
  if (url.startsWith('node:')) return 'node (js)';
  return url === '' ? '(native / vm)' : 'other';
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfTime = new Map<number, number>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= skipUs) selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  });
  for (const [id, us] of selfTime) {
    const node = nodes.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') {
      byFunction.set(functionName, (byFunction.get(functionName) ?? 0) + us);
      continue;
    }
    total += us;
    const where = shortUrl(url);
    const fn = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byFile.set(where, (byFile.get(where) ?? 0) + us);
    const pkg = packageOf(url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
}

function print(title: string, map: Map<string, number>, limit: number): void {
  process.stdout.write(`\n${title}\n`);
  const rows = [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  for (const [name, us] of rows) {
    process.stdout.write(`${(us / 1000).toFixed(0).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}\n`);
  }
}

process.stdout.write(`${files.length} profile(s), ${(total / 1000).toFixed(0)} ms busy (idle ${((byFunction.get('(idle)') ?? 0) / 1000).toFixed(0)} ms, program ${((byFunction.get('(program)') ?? 0) / 1000).toFixed(0)} ms)\n`);
print('self time by package / src folder', byPackage, 25);
print('self time by file', byFile, top);
print('self time by function', byFunction, top);
