// Runs the gateway as `npm start` does, in a child process of its own process
// group, for tests that signal or kill it.
import { spawn, type ChildProcess } from 'node:child_process';

const ROOT = new URL('../../', import.meta.url);

export interface GatewayProcess {
  child: ChildProcess;
  /** Everything the process wrote to stderr (its logs at LOG_LEVEL), for failure messages. */
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<number | string>;
}

export function startGateway(env: Record<string, string>): GatewayProcess {
  const child = spawn(process.execPath, ['--import', './src/compat/node20.mjs', '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  return { child, stderr: () => stderr, exited };
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
