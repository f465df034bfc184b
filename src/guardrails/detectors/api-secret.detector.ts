import type { Detector } from '../detector.types';
import { regexMatches } from './regex-scan.util';

// Credentials that must not travel to an upstream or back to a client: our
// own `tsxt-` keys, OpenAI / Anthropic style `sk-` keys, AWS access key ids,
// GitHub tokens and PEM private keys.
const MAX_MATCH = 4096;

// A PEM block is matched whole when its END line is within reach, otherwise
// its BEGIN line alone, so a block longer than the cap (or cut off) is still
// caught. 4096 chars holds an RSA-4096 key (~3.3k chars), the largest in
// common use; the cap is what the streaming window has to hold back.
const PEM_LABEL = '[A-Z0-9 ]{0,40}PRIVATE KEY-----';
const PEM_BEGIN = `-----BEGIN ${PEM_LABEL}`;
const PEM_END = `-----END ${PEM_LABEL}`;
const PEM_BODY_MAX = MAX_MATCH - (11 + 40 + 16) - (9 + 40 + 16);

// Key bodies are capped so a match stays within MAX_MATCH; a key longer than
// the cap still has its first 250+ chars masked, which is what makes it usable.
const TOKENS = [
  'tsxt-[A-Za-z0-9]{46}(?![A-Za-z0-9])',
  'sk-[A-Za-z0-9_-]{20,256}',
  '(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])',
  'gh[pousr]_[A-Za-z0-9]{36,255}',
  'github_pat_[A-Za-z0-9_]{22,255}',
];

const PATTERN = new RegExp(
  `(?<![A-Za-z0-9_-])(?:${TOKENS.join('|')})|${PEM_BEGIN}(?:[\\s\\S]{0,${PEM_BODY_MAX}}?${PEM_END})?`,
  'g',
);

// "sk-" followed by 20 word chars is also how hyphenated prose can look
// ("sk-learn-is-a-python-library"); real keys always carry digits.
const SK_PREFIX = 'sk-';
const HAS_DIGIT = /\d/;

export const apiSecretDetector: Detector = {
  rule: 'api-secret',
  category: 'secret',
  maxMatchLength: MAX_MATCH,
  find(text) {
    return regexMatches(PATTERN, text, (match) => !match[0].startsWith(SK_PREFIX) || HAS_DIGIT.test(match[0]));
  },
};
