import { expect } from 'chai';
import { apiSecretDetector } from '../../../../src/guardrails';
import { PEM_KEY, base62, detectorTable, pemKey } from '../guardrail-samples';

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
      // a block cut off still has its BEGIN line caught (and is open: see below)
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

  const find = (text: string) => apiSecretDetector.find(text).map(({ start, end }) => text.slice(start, end));

  describe('private keys: open-ended matches', () => {
    it('matches a whole BEGIN…END block of any length', () => {
      for (const key of [PEM_KEY, pemKey(3300), pemKey(9000, 3, 'ENCRYPTED PRIVATE KEY')]) {
        expect(find(`here is my key:\n${key}\nthanks`)).to.deep.equal([key]);
        expect(apiSecretDetector.openMatchStart?.(`x ${key} y`)).to.equal(null);
      }
    });

    it('reports an unterminated block by its BEGIN line, and where it opens', () => {
      const cut = PEM_KEY.slice(0, PEM_KEY.indexOf('-----END'));
      const text = `key: ${cut}`;
      expect(find(text)).to.deep.equal(['-----BEGIN RSA PRIVATE KEY-----']);
      expect(apiSecretDetector.openMatchStart?.(text)).to.equal(5);
    });

    it('opens at the first BEGIN line after the last closed block', () => {
      const second = pemKey(200, 9);
      const open = second.slice(0, second.indexOf('-----END'));
      const text = `${PEM_KEY}\nthen\n${open}`;
      expect(find(text)).to.deep.equal([PEM_KEY, '-----BEGIN RSA PRIVATE KEY-----']);
      expect(apiSecretDetector.openMatchStart?.(text)).to.equal(PEM_KEY.length + 6);
      expect(apiSecretDetector.openMatchStart?.('no key here')).to.equal(null);
      expect(apiSecretDetector.openMatchStart?.('-----BEGIN RSA PRIVATE KEY----')).to.equal(null);
    });

    it('does not report a token-like run inside a key body as a second secret', () => {
      const key = ['-----BEGIN PRIVATE KEY-----', `MIIB/AKIAIOSFODNN7EXAMPLE/${base62(30)}`, '-----END PRIVATE KEY-----'].join('\n');
      expect(find(`k ${key} AKIAIOSFODNN7EXAMPLE`)).to.deep.equal([key, 'AKIAIOSFODNN7EXAMPLE']);
    });
  });
});
