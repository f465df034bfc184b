import { hash, randomInt } from 'node:crypto';

// Secret layout: `tsxt-` + 40 random base62 chars + 6-char base62 checksum of
// the first 45 chars. A typo or a truncated paste fails the checksum, so the
// data plane refuses it (401) without touching the database.
const PREFIX = 'tsxt-';
const BODY = 40;
const CHECK = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = /^tsxt-[0-9A-Za-z]{46}$/;

// One-shot crypto.hash (Node ≥ 20.12): no Hash object per call, on the data plane's every request.
function checksum(head: string): string {
  const digest = hash('sha256', head, 'buffer');
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

/** `tsxt-` and 46 base62 characters: a cheap test before anything hashes the candidate. */
export function hasSecretShape(candidate: string): boolean {
  return SHAPE.test(candidate);
}

/** The last six characters are the checksum of the rest (for a candidate of the secret's shape). */
export function hasValidChecksum(candidate: string): boolean {
  return checksum(candidate.slice(0, PREFIX.length + BODY)) === candidate.slice(PREFIX.length + BODY);
}

export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** What the console may show: `tsxt-abcd…wxyz`. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, PREFIX.length + 4)}…${secret.slice(-4)}`;
}
