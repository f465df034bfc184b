// The first owner's credentials on a fresh installation (issue 28): stdout is
// the log stream (collected by systemd, Docker, a log shipper), so they never
// go there. They are written once to a file only this OS user can read, and
// the log says where it is.
import { open, mkdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { FirstStartCredentials } from './domain/bootstrap';

export const FIRST_START_FILE = 'first-start-credentials.txt';

function credentialsText(base: string, credentials: FirstStartCredentials): string {
  return [
    'First start: created the owner of account "default".',
    `console:  ${base}/console`,
    `e-mail:   ${credentials.email}`,
    `password: ${credentials.password}`,
    `session token (Authorization: Bearer …): ${credentials.token}`,
    `token expires: ${credentials.expiresAt.toISOString()}`,
    'Sign in, then delete this file. Set GATEWAY_BOOTSTRAP_TOKEN to choose the token yourself.',
    '',
  ].join('\n');
}

/**
 * Writes `<dataDir>/first-start-credentials.txt` with mode 0600 and logs its
 * path (never its contents). A file left from an earlier installation is
 * replaced rather than opened: its mode or owner may have been changed, and
 * creating afresh (`wx`) is the only way the mode is the one asked for.
 */
export async function saveFirstStartCredentials(dataDir: string, base: string, credentials: FirstStartCredentials, logger: Logger): Promise<string> {
  const file = path.resolve(dataDir, FIRST_START_FILE);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await unlink(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  const handle = await open(file, 'wx', 0o600);
  try {
    // The umask can only take bits away; chmod makes it exactly 0600 whatever it is.
    await handle.chmod(0o600);
    await handle.writeFile(credentialsText(base, credentials));
  } finally {
    await handle.close();
  }
  logger.warn({ file }, 'First start: created the owner of account "default"; the e-mail, password and session token are in this file (mode 0600). Sign in, then delete it.');
  return file;
}
