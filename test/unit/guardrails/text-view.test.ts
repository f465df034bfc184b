// What detectors read (text-view.ts): each obfuscation class reads as what a
// reader sees, the raw span behind each view char is kept, the text read in
// pieces reads as the text read whole, and plain text is its own view.
import { expect } from 'chai';
import fc from 'fast-check';
import { createGuardrails, defaultDetectors, resolvePolicies } from '../../../src/guardrails';
import { TextView, readsAsItself, viewOf } from '../../../src/guardrails/text-view';

/** [class, raw, what detectors read, what address and key detectors read] */
const READINGS: Array<[string, string, string, string?]> = [
  ['zero-width space, joiners, word joiner, BOM', 'li\u200B.l\u200Ce\u200Di\u2060@exa\uFEFFmple.cn', 'li.lei@example.cn'],
  ['soft hyphen', 'sk-proj-4bN7\u00ADxQ2mR9', 'sk-proj-4bN7xQ2mR9'],
  ['bidi controls', '138\u200E0013\u202E8000\u2066\u2069', '13800138000'],
  ['full-width @, letters and digits', 'ｌｉ＠ｅｘａｍｐｌｅ．ｃｎ １３８００１３８０００', 'li@example.cn 13800138000'],
  ['mathematical and circled digits, ligature', '𝟏𝟑𝟖 ① ﬁle', '138 1 file'],
  ['no-break and ideographic spaces', '4111\u00A01111\u30001111\u20091111', '4111 1111 1111 1111'],
  ['Arabic-Indic and extended digits', '١٣٨٠٠١٣٨٠٠٠ ۱۳۸', '13800138000 138'],
  ['digits of other scripts', '१३८ ১৩৮ ๑๓๘', '138 138 138'],
  ['dash look-alikes', '138‐0013–8000 4111−1111', '138-0013-8000 4111-1111'],
  ['percent escapes of printable ASCII only', 'li%40example.cn %2e %ZZ %00 %E2%80', 'li@example.cn . %ZZ %00 %E2%80'],
  ['HTML references, with and without ;', 'li&#64;x.cn &#x40; &#X40 &commat; &period; &lowbar;', 'li@x.cn @ @ @ . _'],
  ['a reference to an invisible char reads as nothing', 'a&#8203;b&#x200B;c', 'abc'],
  ['escapes are read once', '&amp;#64; %2540', '&#64; %40'],
  ['what is not an escape stays', 'AT&T, 50% off, a && b, &unknown; &#; &#xZZ;', 'AT&T, 50% off, a && b, &unknown; &#; &#xZZ;'],
  ['Cyrillic look-alikes, for address and key detectors only', 'ѕk-proj АКІА јоhn@ехаmple.com', 'ѕk-proj АКІА јоhn@ехаmple.com', 'sk-proj AKIA john@example.com'],
  ['Greek look-alikes, for address and key detectors only', 'ΑΚΙΑ ΕΧΑΜΡLΕ', 'ΑΚΙΑ ΕΧΑΜΡLΕ', 'AKIA EXAMPLE'],
  ['look-alikes inside a Russian or Greek word stay as they are', 'почта@mail.ru Ελλάδα', 'почта@mail.ru Ελλάδα', 'почта@mail.ru Eλλάδα'],
  ['Chinese prose (full-width punctuation concerns no detector)', '感谢您的提问，简单来说：缓存会重建。', '感谢您的提问，简单来说：缓存会重建。'],
];

describe('guardrails: the text detectors read', () => {
  for (const [name, raw, text, letters] of READINGS) {
    it(`${name}: ${JSON.stringify(raw)} reads as ${JSON.stringify(letters ?? text)}`, () => {
      const view = viewOf(raw);
      expect(view?.text ?? raw).to.equal(text);
      expect(view?.letters ?? raw).to.equal(letters ?? text);
    });
  }

  it('keeps the raw span of each view char, so a match masks what a reader saw', () => {
    const raw = 'x li\u200B.lei&#64;ｅｘ.cn y';
    const view = viewOf(raw)!;
    expect(view.text).to.equal('x li.lei@ex.cn y');
    const start = view.text.indexOf('li');
    const end = view.text.indexOf(' y');
    expect(raw.slice(view.rawStart(start), view.rawEnd(end - 1))).to.equal('li\u200B.lei&#64;ｅｘ.cn');
    // The end of the view maps to the end of the raw text.
    expect(view.rawStart(view.text.length)).to.equal(raw.length);
  });

  it('reads plain ASCII without "%" and "&", and Chinese prose, as itself, allocating nothing', () => {
    for (const text of ['plain ASCII, even with @ and digits 13800138000', '感谢您的提问（简单来说）：缓存会重建，“预热”——就好……']) {
      expect(readsAsItself(text), text).to.equal(true);
      expect(viewOf(text), text).to.equal(null);
    }
    for (const text of ['50%', 'a&b', 'é', '１', '＠', '\u200B', 'а', '٣']) expect(readsAsItself(text), text).to.equal(false);
  });

  it('reads a text in pieces as it reads it whole, however it is cut (property)', () => {
    const alphabet = ['a', 'b', '@', '.', '-', '1', '3', '8', ' ', '%', '4', '0', '2', 'E', '&', '#', 'x', ';', 'c', 'o', 'm', 't', 'n', 'b', 's', 'p',
      '\u200B', '\u00AD', '\u202E', 'ｌ', '＠', '１', '٣', '۸', 'а', 'К', 'Α', '\uD835\uDFCF', '😀', '中', '，', '‐', '\u00A0'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 48 }), fc.array(fc.nat(48), { maxLength: 8 }), (chars, cuts) => {
        const raw = chars.join('');
        const whole = viewOf(raw);
        const pieces = new TextView();
        let at = 0;
        for (const cut of [...cuts].sort((a, b) => a - b)) {
          if (cut <= at || cut > raw.length) continue;
          pieces.append(raw.slice(at, cut));
          at = cut;
        }
        pieces.append(raw.slice(at));
        pieces.finish();
        const text = whole?.text ?? raw;
        expect(pieces.text).to.equal(text);
        expect(pieces.letters).to.equal(whole?.letters ?? raw);
        for (let k = 0; k < text.length; k++) {
          expect(pieces.rawStart(k)).to.equal(whole?.rawStart(k) ?? k);
          expect(pieces.rawEnd(k)).to.equal(whole?.rawEnd(k) ?? k + 1);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('holds back an escape or a surrogate pair cut off by the end of what arrived, until the next piece decides', () => {
    const view = new TextView();
    view.append('mail li%4');
    expect(view.text).to.equal('mail li');
    expect(view.readUpTo).to.equal(7);
    view.append('0x.cn &#6');
    expect(view.text).to.equal('mail li@x.cn ');
    view.append('4 \uD83D');
    expect(view.text).to.equal('mail li@x.cn @ ');
    view.finish();
    expect(view.text).to.equal('mail li@x.cn @ \uD83D');
  });
});

describe('guardrails: input read as a reader sees it', () => {
  const guardrails = createGuardrails({ detectors: defaultDetectors(['forbidden', '违禁词']), policies: resolvePolicies() });
  const inspect = (text: string) => guardrails.inputInspector().text(text, 'messages.0.content');

  const MASKED: Array<[string, string, string]> = [
    ['an e-mail with zero-width chars and a soft hyphen', 'mail li\u200B.lei@exam\u00ADple.cn now', 'mail [REDACTED:email] now'],
    ['a mobile number with bidi controls', 'call 139\u202E1234\u202C5678 today', 'call [REDACTED:cn-mobile] today'],
    ['an sk- key with a zero-width joiner', 'key sk-proj-4bN7xQ2m\u200DR9kT1vW8yZ3cL6fH0j ok', 'key [REDACTED:api-secret] ok'],
    ['an AKIA key with a soft hyphen', 'id AKIA\u00ADIOSFODNN7EXAMPLE.', 'id [REDACTED:api-secret].'],
    ['a card number with zero-width spaces', 'card 4111\u200B1111\u200B1111\u200B1111 ok', 'card [REDACTED:bank-card] ok'],
    ['a PEM header with a zero-width space', 'k -----BEGIN RSA PRI\u200BVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done', 'k [REDACTED:api-secret] done'],
    ['a full-width ＠ and digits', '写信到 li.lei＠example.cn 或拨打 １３９１２３４５６７８。', '写信到 [REDACTED:email] 或拨打 [REDACTED:cn-mobile]。'],
    ['Cyrillic look-alikes in an address and a key', 'to јоhn@ехаmple.com with АКІАIOSFODNN7EXAMPLE', 'to [REDACTED:email] with [REDACTED:api-secret]'],
    ['Arabic-Indic digits', 'رقم ١٣٩١٢٣٤٥٦٧٨ شكرا', 'رقم [REDACTED:cn-mobile] شكرا'],
    ['%40', 'mailto:li.lei%40example.cn?x', 'mailto:[REDACTED:email]?x'],
    ['&#64; and &commat;', 'a li.lei&#64;example.cn b ops&commat;example.com', 'a [REDACTED:email] b [REDACTED:email]'],
  ];
  for (const [name, raw, masked] of MASKED) {
    it(`masks ${name} on the raw span`, () => {
      expect(inspect(raw)).to.equal(masked);
    });
  }

  it('finds a listed word written with invisible chars or full-width letters, and lists words as they read', () => {
    expect(() => inspect('the f\u200Borbidden plan')).to.throw(/block-list/);
    expect(() => inspect('the ｆｏｒｂｉｄｄｅｎ plan')).to.throw(/block-list/);
    expect(() => inspect('违\u200B禁词')).to.throw(/block-list/);
  });

  it('does not read Russian or Greek words as Latin ones for the block list or in prose', () => {
    const listed = createGuardrails({ detectors: defaultDetectors(['pop', 'cop', 'mama']), policies: resolvePolicies() });
    const text = 'Мама купила рор и сор. Καλημέρα, ΑΚΙΑ. Пишите на почта@mail.ru.';
    expect(listed.inputInspector().text(text, 'messages.0.content')).to.equal(text);
  });
});
