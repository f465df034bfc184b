import type { Detector, DetectorMatch } from '../detector.types';
import { alt, assert, char, earliestOpenStart, findRegExp, literal, openPrefixRegExp, repeat, seq } from './pattern.util';
import { regexMatches } from './regex-scan.util';

// Credentials that must not travel to an upstream or back to a client: our
// own `tsxt-` keys, OpenAI / Anthropic style `sk-` keys, AWS access key ids,
// GitHub tokens and PEM private keys.

// Key bodies are capped so a token match stays bounded; a key longer than the
// cap still has its first 250+ chars masked, which is what makes it usable.
const ALNUM = char('[A-Za-z0-9]');
const PEM_BEGIN_LINE = '-----BEGIN ';
const TOKENS = seq(
  assert('(?<![A-Za-z0-9_-])'),
  alt(
    seq(literal('tsxt-'), repeat(ALNUM, 46, 46), assert('(?![A-Za-z0-9])')),
    // The body may hold dashes but does not run into a private key's BEGIN
    // line: a token decided before that line is complete would hide it.
    seq(literal('sk-'), repeat(seq(assert(`(?!${PEM_BEGIN_LINE})`), char('[A-Za-z0-9_-]')), 20, 256)),
    seq(alt(literal('AKIA'), literal('ASIA')), repeat(char('[0-9A-Z]'), 16, 16), assert('(?![0-9A-Za-z])')),
    seq(literal('gh'), char('[pousr]'), literal('_'), repeat(ALNUM, 36, 255)),
    seq(literal('github_pat_'), repeat(char('[A-Za-z0-9_]'), 22, 255)),
  ),
);
const TOKEN_PATTERN = findRegExp(TOKENS);

// A PEM private key is open-ended: its body has no useful length cap (an
// RSA-4096 key is ~3.3k chars, and nothing stops a longer one). From its
// BEGIN line the match runs to the first END line, or, without one, to the
// end of the text.
const PEM_LABEL = seq(repeat(char('[A-Z0-9 ]'), 0, 40), literal('PRIVATE KEY-----'));
const PEM_BEGIN_MARKER = seq(literal(PEM_BEGIN_LINE), PEM_LABEL);
const PEM_BEGIN = findRegExp(PEM_BEGIN_MARKER);
const PEM_END = findRegExp(seq(literal('-----END '), PEM_LABEL));

// Where a token or a BEGIN line could still be under way (an unclosed key is
// found by scanPem).
const OPEN = openPrefixRegExp(alt(TOKENS, PEM_BEGIN_MARKER));

// "sk-" followed by 20 word chars is also how hyphenated prose can look
// ("sk-learn-is-a-python-library"); real keys always carry digits.
const SK_PREFIX = 'sk-';
const HAS_DIGIT = /\d/;

interface PemScan {
  /** Whole BEGIN…END blocks, and bare BEGIN lines of unterminated ones. */
  blocks: DetectorMatch[];
  /** Start of the first BEGIN line no END line follows. */
  openStart: number | null;
}

/** One linear pass from `from`: each END search starts where the last block ended, and stops for good once an END is missing. */
function scanPem(text: string, from: number): PemScan {
  const blocks: DetectorMatch[] = [];
  let openStart: number | null = null;
  PEM_BEGIN.lastIndex = from;
  for (let begin = PEM_BEGIN.exec(text); begin !== null; begin = PEM_BEGIN.exec(text)) {
    const markerEnd = begin.index + begin[0].length;
    let end: RegExpExecArray | null = null;
    if (openStart === null) {
      PEM_END.lastIndex = markerEnd;
      end = PEM_END.exec(text);
    }
    if (end === null) {
      openStart ??= begin.index;
      blocks.push({ start: begin.index, end: markerEnd });
    } else {
      blocks.push({ start: begin.index, end: end.index + end[0].length });
      PEM_BEGIN.lastIndex = end.index + end[0].length;
    }
  }
  return { blocks, openStart };
}

export const apiSecretDetector: Detector = {
  rule: 'api-secret',
  category: 'secret',
  lookalikes: true,
  find(text, from = 0) {
    const tokens = regexMatches(TOKEN_PATTERN, text, (match) => !match[0].startsWith(SK_PREFIX) || HAS_DIGIT.test(match[0]), from);
    if (!text.includes(PEM_BEGIN_LINE, from)) return tokens;
    const { blocks } = scanPem(text, from);
    if (blocks.length === 0) return tokens;
    // A token inside a key body is part of the key, not a second secret.
    const outside = tokens.filter((token) => !blocks.some((block) => token.start >= block.start && token.start < block.end));
    return [...outside, ...blocks].sort((a, b) => a.start - b.start);
  },
  holdFrom(text, from) {
    const partial = earliestOpenStart(OPEN, text, from);
    const open = openKeyStart(text, from);
    return open === null ? partial : Math.min(open, partial);
  },
  openMatchStart: (text, from = 0) => openKeyStart(text, from),
};

function openKeyStart(text: string, from: number): number | null {
  return text.includes(PEM_BEGIN_LINE, from) ? scanPem(text, from).openStart : null;
}
