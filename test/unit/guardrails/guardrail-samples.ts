// Builders for valid (and deliberately broken) sensitive values, shared by
// the detector tables and the streaming property tests.
import { expect } from 'chai';
import type { Detector } from '../../../src/guardrails';
import { passesLuhn } from '../../../src/guardrails/detectors/bank-card.detector';
import { cnIdCheckChar } from '../../../src/guardrails/detectors/cn-id-card.detector';

/** A complete ID number: the 17 given digits plus their MOD 11-2 check char. */
export function idCard(first17: string): string {
  return first17 + cnIdCheckChar(first17);
}

/** A Luhn-valid number: `body` plus the one check digit that makes it pass. */
export function luhnNumber(body: string): string {
  for (let digit = 0; digit <= 9; digit++) if (passesLuhn(body + digit)) return body + digit;
  throw new Error('unreachable: one check digit always fits');
}

/** An ID number whose 18 digits also pass Luhn, so bank-card finds it too. */
export function luhnValidIdCard(): string {
  for (let seq = 100; ; seq++) {
    const id = idCard(`44030619900101${seq}`.slice(0, 17));
    if (/^\d{18}$/.test(id) && luhnNumber(id.slice(0, -1)) === id) return id;
  }
}

/** The same number with its last digit changed, so Luhn fails. */
export function breakLastDigit(value: string): string {
  const last = Number(value.at(-1));
  return value.slice(0, -1) + String((last + 1) % 10);
}

export const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `count` base62 chars, deterministic for a seed. */
export function base62(count: number, seed = 7): string {
  let out = '';
  for (let i = 0; i < count; i++) out += BASE62.charAt((seed * 31 + i * 17 + ((i * i) % 13)) % BASE62.length);
  return out;
}

export const PEM_KEY = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun',
  'VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK',
  'LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo',
  '-----END RSA PRIVATE KEY-----',
].join('\n');

/**
 * A PEM private key whose base64 body (64-char lines) is about `bodyChars`
 * long, deterministic for a seed; RSA-4096 keys are ~3.2k chars.
 */
export function pemKey(bodyChars: number, seed = 7, label = 'RSA PRIVATE KEY'): string {
  const alphabet = `${BASE62}+/`;
  let body = '';
  let state = seed;
  for (let i = 0; i < bodyChars; i++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    body += alphabet.charAt((state >>> 16) % alphabet.length);
  }
  const lines = body.match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`].join('\n');
}

/** The body lines of a PEM key (everything between its BEGIN and END lines). */
export function pemBodyLines(pem: string): string[] {
  return pem.split('\n').filter((line) => !line.startsWith('-----'));
}

export interface DetectorTable {
  /** [text, the exact substring expected to be matched] */
  matches: ReadonlyArray<readonly [string, string]>;
  /** Texts with nothing to find. */
  misses: readonly string[];
}

/**
 * The streaming filter's premise, for one cut of a text: everything a detector
 * finds before its hold point in the text so far is what it finds there in
 * the whole text, so releasing that part can never let a match through.
 * Returns a description of the first difference, or null.
 */
export function holdViolation(detector: Detector, text: string, cut: number): string | null {
  const prefix = text.slice(0, cut);
  const hold = detector.holdFrom(prefix, 0);
  const before = (matches: ReadonlyArray<{ start: number; end: number }>) =>
    matches.filter((match) => match.start < hold).map(({ start, end }) => `${start}-${end}`);
  const early = before(detector.find(prefix));
  const final = before(detector.find(text));
  if (early.join() === final.join()) return null;
  return `${JSON.stringify(prefix)} held from ${hold}: found ${early.join() || 'nothing'}, whole text has ${final.join() || 'nothing'}`;
}

/** One `it` per row: positives must match exactly, near-misses must not match, and no cut of either is released too early. */
export function detectorTable(detector: Detector, table: DetectorTable): void {
  const holdsBack = (text: string) => {
    for (let cut = 0; cut <= text.length; cut++) expect(holdViolation(detector, text, cut)).to.equal(null);
  };
  for (const [text, expected] of table.matches) {
    it(`finds ${JSON.stringify(expected)} in ${JSON.stringify(text)}, holding it back in every cut`, () => {
      const found = detector.find(text).map(({ start, end }) => text.slice(start, end));
      expect(found).to.deep.equal([expected]);
      holdsBack(text);
      // While it is unfinished, the match is held from its start.
      const start = text.indexOf(expected);
      for (let cut = start + 1; cut < start + expected.length; cut++) expect(detector.holdFrom(text.slice(0, cut), 0)).to.be.at.most(start);
    });
  }
  for (const text of table.misses) {
    it(`finds nothing in ${JSON.stringify(text)}`, () => {
      const found = detector.find(text).map(({ start, end }) => text.slice(start, end));
      expect(found).to.deep.equal([]);
      holdsBack(text);
    });
  }
}
