import { createHash, randomInt } from 'node:crypto';

// Secret layout: `tsxt-` + 40 random base62 chars + 6-char base62 checksum of
// the first 45 chars. A typo or a truncated paste fails the checksum, so the
// data plane refuses it (401) without touching the database.
const PREFIX = 'tsxt-';
const BODY = 40;
const CHECK = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = /^tsxt-[0-9A-Za-z]{46}$/;

function checksum(head: string): string {
  const digest = createHash('sha256').update(head).digest();
  let n = digest.readUInt32BE(0) * 0x10000 + digest.readUInt16BE(4);
  let out = '';
  for (let i = 0; i < CHECK; i++) {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateSecret(): string {
  let body = '';
  for (let i = 0; i < BODY; i++) body += BASE62[randomInt(62)]!;
  const head = PREFIX + body;
  return head + checksum(head);
}

/** Shape and checksum only; says nothing about whether the key exists. */
export function isWellFormedSecret(candidate: string): boolean {
  if (!SHAPE.test(candidate)) return false;
  const head = candidate.slice(0, PREFIX.length + BODY);
  return checksum(head) === candidate.slice(PREFIX.length + BODY);
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** What the console may show: `tsxt-abcd…wxyz`. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, PREFIX.length + 4)}…${secret.slice(-4)}`;
}
