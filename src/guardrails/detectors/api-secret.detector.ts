import type { Detector, DetectorMatch } from '../detector.types';
import { regexMatches } from './regex-scan.util';

// Credentials that must not travel to an upstream or back to a client: our
// own `tsxt-` keys, OpenAI / Anthropic style `sk-` keys, AWS access key ids,
// GitHub tokens and PEM private keys.

// Key bodies are capped so a token match stays bounded; a key longer than the
// cap still has its first 250+ chars masked, which is what makes it usable.
const TOKENS = [
  'tsxt-[A-Za-z0-9]{46}(?![A-Za-z0-9])',
  'sk-[A-Za-z0-9_-]{20,256}',
  '(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])',
  'gh[pousr]_[A-Za-z0-9]{36,255}',
  'github_pat_[A-Za-z0-9_]{22,255}',
];
const TOKEN_PATTERN = new RegExp(`(?<![A-Za-z0-9_-])(?:${TOKENS.join('|')})`, 'g');
/** The longest token: `github_pat_` + 255. */
const MAX_TOKEN = 11 + 255;

// A PEM private key is open-ended: its body has no useful length cap (an
// RSA-4096 key is ~3.3k chars, and nothing stops a longer one), so only its
// BEGIN line sizes the streaming window. From there the match runs to the
// first END line, or, without one, to the end of the text.
const PEM_LABEL = '[A-Z0-9 ]{0,40}PRIVATE KEY-----';
const PEM_BEGIN = new RegExp(`-----BEGIN ${PEM_LABEL}`, 'g');
const PEM_END = new RegExp(`-----END ${PEM_LABEL}`, 'g');
/** `-----BEGIN ` + label + `PRIVATE KEY-----`. */
const MAX_PEM_MARKER = 11 + 40 + 16;

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

/** One linear pass: each END search starts where the last block ended, and stops for good once an END is missing. */
function scanPem(text: string): PemScan {
  const blocks: DetectorMatch[] = [];
  let openStart: number | null = null;
  PEM_BEGIN.lastIndex = 0;
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
  maxMatchLength: Math.max(MAX_TOKEN, MAX_PEM_MARKER),
  find(text) {
    const tokens = regexMatches(TOKEN_PATTERN, text, (match) => !match[0].startsWith(SK_PREFIX) || HAS_DIGIT.test(match[0]));
    if (!text.includes('-----BEGIN ')) return tokens;
    const { blocks } = scanPem(text);
    if (blocks.length === 0) return tokens;
    // A token inside a key body is part of the key, not a second secret.
    const outside = tokens.filter((token) => !blocks.some((block) => token.start >= block.start && token.start < block.end));
    return [...outside, ...blocks].sort((a, b) => a.start - b.start);
  },
  openMatchStart(text) {
    return text.includes('-----BEGIN ') ? scanPem(text).openStart : null;
  },
};
