// Header values the gateway writes from text it does not control (names from
// a caller's JSON, model names from the catalog). Node refuses a header value
// with a character above U+00FF or a control character such as CR or LF (it
// throws on write), and a raw comma or space would blur a list's items.

/**
 * Plain visible ASCII other than `%` (the escape) and `,` (the list
 * separator), with spaces only inside (a header value's edges are trimmed):
 * the gateway's own names read `tools.3 (web_search)`.
 */
const PLAIN = /^(?:[\x21-\x24\x26-\x2b\x2d-\x7e](?:[\x20-\x24\x26-\x2b\x2d-\x7e]*[\x21-\x24\x26-\x2b\x2d-\x7e])?)?$/;

const HEX = '0123456789ABCDEF';

/**
 * `text` as one header-safe token: plain visible ASCII (and inner spaces)
 * stays as it is; every other byte of its UTF-8 (non-ASCII letters,
 * controls, CR and LF, a leading or trailing space), and `%` and `,`, is
 * percent-encoded as RFC 3986 and RFC 8187 do, so `字段` is written
 * `%E5%AD%97%E6%AE%B5` and decodes back with decodeURIComponent. A lone
 * surrogate becomes U+FFFD (`%EF%BF%BD`).
 */
export function headerToken(text: string): string {
  if (PLAIN.test(text)) return text;
  const bytes = Buffer.from(text, 'utf8');
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    const inner = byte === 0x20 && i > 0 && i < bytes.length - 1;
    if (inner || (byte > 0x20 && byte < 0x7f && byte !== 0x25 && byte !== 0x2c)) out += String.fromCharCode(byte);
    else out += `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return out;
}
