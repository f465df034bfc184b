import { apiSecretDetector } from '../../../../src/guardrails';
import { PEM_KEY, base62, detectorTable } from '../guardrail-samples';

describe('api-secret detector', () => {
  const tsxt = `tsxt-${base62(46)}`;
  const skProj = `sk-proj-${base62(48, 3)}`;
  const skAnt = `sk-ant-api03-${base62(40, 5)}-${base62(20, 9)}`;
  const ghp = `ghp_${base62(36, 11)}`;
  const pemBegin = '-----BEGIN OPENSSH PRIVATE KEY-----';
  detectorTable(apiSecretDetector, {
    matches: [
      [`Authorization: Bearer ${tsxt}`, tsxt],
      [`OPENAI_API_KEY=${skProj}`, skProj],
      [`key "${skAnt}"`, skAnt],
      ['aws AKIAIOSFODNN7EXAMPLE here', 'AKIAIOSFODNN7EXAMPLE'],
      [`token=${ghp}`, ghp],
      [`here is my key:\n${PEM_KEY}\nthanks`, PEM_KEY],
      // a block cut off (or too long to hold) still has its BEGIN line caught
      [`${pemBegin}\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ`, pemBegin],
    ],
    misses: [
      `tsxt-${base62(45)}`, // too short
      `tsxt-${base62(47)}`, // too long for our format
      `xtsxt-${base62(46)}`, // inside a longer token
      'sk-short',
      'sk-learn-is-a-python-library-for-ml', // prose, no digits
      'task-1234567890abcdefghij1234', // "sk-" inside a word
      'AKIAIOSFODNN7EXAMPL', // 15 chars after AKIA
      `ghp_${base62(20)}`,
      '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----',
    ],
  });
});
