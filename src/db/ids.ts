import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

// Every request gets an id: one CSPRNG fill per 256 ids instead of one per id
// (randomBytes per call showed up in the data plane's CPU profile).
const POOL = Buffer.alloc(16 * 256);
let offset = POOL.length;

function random16(): Buffer {
  if (offset === POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  offset += 16;
  return POOL.subarray(offset - 16, offset);
}

/** A ULID (26 chars, time-ordered) with a type prefix, e.g. `key_01J…`. */
export function newId(prefix: string, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  const bytes = random16();
  let rand = '';
  for (let i = 0; i < 16; i++) rand += CROCKFORD[bytes[i]! % 32]!;
  return `${prefix}_${time}${rand}`;
}
