// Runs the gateway as `npm start` does — the production bundle dist/main.mjs
// on plain Node, built once per test run — in a child process of its own
// process group, for tests that signal or kill it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { buildGateway } from '../../scripts/build-gateway';

const ROOT = new URL('../../', import.meta.url);

let bundle: Promise<string> | undefined;

/** The argv after `node` that runs the gateway as `npm start` does. */
async function gatewayArgv(): Promise<string[]> {
  bundle ??= buildGateway();
  return [await bundle];
}

export interface GatewayProcess {
  child: ChildProcess;
  /** The last 20,000 characters the process wrote to stderr, for failure messages. */
  stderr(): string;
  /** The last 20,000 characters the process wrote to stdout: its log stream (pino, at LOG_LEVEL). */
  stdout(): string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<number | string>;
}

/** The bundle `npm start` runs, built once per test run (for tests that copy it into a checkout of their own). */
export async function gatewayBundle(): Promise<string> {
  return (await gatewayArgv())[0]!;
}

/** `checkout`: run that folder's dist/main.mjs with it as the working directory instead of this repository's. */
export async function startGateway(env: Record<string, string>, checkout?: string): Promise<GatewayProcess> {
  const child = spawn(process.execPath, checkout === undefined ? await gatewayArgv() : [path.join(checkout, 'dist', 'main.mjs')], {
    cwd: checkout ?? ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  // Always read: an unread pipe fills up and would stall the gateway's logger.
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout = (stdout + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  return { child, stderr: () => stderr, stdout: () => stdout, exited };
}

export async function waitReady(base: string, gateway: GatewayProcess | ChildProcess, timeoutMs = 60_000): Promise<void> {
  const own = 'exited' in gateway ? gateway : undefined;
  const child = own ? own.child : (gateway as ChildProcess);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}${own ? `: ${own.stderr()}` : ''}`);
    try {
      const response = await fetch(`${base}/readyz`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('gateway did not become ready');
}

/** SIGKILLs the whole process group if it is still running. */
export function killGateway(gateway: GatewayProcess): void {
  if (gateway.child.exitCode === null && gateway.child.signalCode === null && gateway.child.pid !== undefined) {
    try {
      process.kill(-gateway.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** A key made through the REST API with the bootstrap session's token; throws unless it is 201. */
export async function createKeyWithToken(base: string, token: string, name: string, modelScope: string[]): Promise<{ api_key: string; api_key_id: string }> {
  const created = await fetch(`${base}/api/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, dimension: '成本中心', model_scope: modelScope }),
  });
  if (created.status !== 201) throw new Error(`creating key ${name} failed: ${created.status} ${await created.text()}`);
  return (await created.json()) as { api_key: string; api_key_id: string };
}
