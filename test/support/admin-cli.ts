// The operator CLI as an operator runs it: a child process on the given
// database, JSON on stdout (see src/cli/admin.ts).
import { spawn } from 'node:child_process';

export interface AdminRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runAdmin(databaseUrl: string, ...args: string[]): Promise<AdminRun> {
  return runAdminWithInput(databaseUrl, undefined, ...args);
}

/** As runAdmin, writing `input` to the CLI's standard input (then closing it). */
export function runAdminWithInput(databaseUrl: string, input: string | undefined, ...args: string[]): Promise<AdminRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', './src/compat/node20.mjs', '--import', 'tsx', 'src/cli/admin.ts', ...args], {
      cwd: process.cwd(),
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
