// Header values made from text the gateway does not control: plain visible
// ASCII as it is, everything else percent-encoded UTF-8, always writable.
import { validateHeaderValue } from 'node:http';
import { expect } from 'chai';
import fc from 'fast-check';
import { headerToken } from '../../../src/http/header-token';

describe('headerToken', () => {
  it('leaves plain field names alone, inner spaces included', () => {
    for (const name of ['cache_control', 'messages.0.content.1.citations', 'top_k', 'x-y~z', 'tools.3 (web_search)']) expect(headerToken(name)).to.equal(name);
  });

  it('percent-encodes non-Latin-1 names, CR/LF, edge spaces, and the escape and list characters as UTF-8', () => {
    expect(headerToken('字段')).to.equal('%E5%AD%97%E6%AE%B5');
    expect(headerToken('a\r\nSet-Cookie: x=1')).to.equal('a%0D%0ASet-Cookie: x=1');
    expect(headerToken(' padded ')).to.equal('%20padded%20');
    expect(headerToken('50%,b')).to.equal('50%25%2Cb');
    expect(headerToken('café')).to.equal('caf%C3%A9');
    expect(headerToken('\ud800')).to.equal('%EF%BF%BD');
  });

  it('always yields a value Node writes, that decodes back to the name', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (name) => {
        const token = headerToken(name);
        expect(() => validateHeaderValue('x-gateway-dropped', token)).to.not.throw();
        // Visible ASCII with inner spaces: no comma to split on, nothing trimmed at the edges.
        expect(token).to.match(/^(?:[\x21-\x2b\x2d-\x7e](?:[\x20-\x2b\x2d-\x7e]*[\x21-\x2b\x2d-\x7e])?)?$/);
        expect(decodeURIComponent(token)).to.equal(name);
      }),
      { numRuns: 500 },
    );
  });
});
