import { expect } from 'chai';
import fc from 'fast-check';
import { formatMicros, mulCeil, parseDecimal, toMicros } from '../../../src/core/decimal';

describe('metering decimal', () => {
  describe('parseDecimal', () => {
    const cases: Array<[string | number, bigint, number, string]> = [
      ['16', 16n, 0, '16'],
      ['0.5', 5n, 1, '0.5'],
      ['0.50', 5n, 1, '0.5'],
      ['007.250', 725n, 2, '7.25'],
      [0.25, 25n, 2, '0.25'],
      [2, 2n, 0, '2'],
      ['0.000001', 1n, 6, '0.000001'],
      ['-1.5', -15n, 1, '-1.5'],
      ['0', 0n, 0, '0'],
    ];
    for (const [input, units, scale, text] of cases) {
      it(`reads ${JSON.stringify(input)} exactly as ${text}`, () => {
        expect(parseDecimal(input)).to.deep.equal({ units, scale, text });
      });
    }

    for (const bad of ['', 'abc', '1.', '.5', '1e3', '1,5', '0x10', '0.0000001', 1e-7, Number.NaN]) {
      it(`refuses ${JSON.stringify(bad)}`, () => {
        expect(() => parseDecimal(bad)).to.throw(RangeError);
      });
    }
  });

  describe('formatMicros', () => {
    const cases: Array<[number | bigint, string, number?]> = [
      [1_234_567, '1.234567'],
      [1_500_000, '1.5'],
      [0, '0'],
      [1, '0.000001'],
      [2_000_000, '2'],
      [-1_500_000, '-1.5'],
      [123_456_789_012_345_678n, '123456789012.345678'],
      [1_500_000, '1.50', 2],
      [1_234_567, '1.234567', 2],
      [0, '0.00', 2],
    ];
    for (const [micros, text, places] of cases) {
      it(`formats ${micros} micro-units as "${text}"${places === undefined ? '' : ` with ${places} places`}`, () => {
        expect(formatMicros(micros, places)).to.equal(text);
      });
    }

    it('refuses a fractional micro-unit amount', () => {
      expect(() => formatMicros(1.5)).to.throw(RangeError);
    });

    it('round-trips through parseDecimal and toMicros', () => {
      fc.assert(
        fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), (micros) => {
          expect(toMicros(parseDecimal(formatMicros(micros)))).to.equal(micros);
        }),
      );
    });
  });

  describe('mulCeil', () => {
    it('rounds a fractional product up: 3 tokens × 0.25 → 1', () => {
      expect(mulCeil(3, parseDecimal('0.25'))).to.equal(1);
    });

    it('leaves an exact product alone: 8 × 0.25 → 2, 7 × 2 → 14', () => {
      expect(mulCeil(8, parseDecimal('0.25'))).to.equal(2);
      expect(mulCeil(7, parseDecimal('2'))).to.equal(14);
    });

    it('never bills a non-empty kind as zero, and zero tokens as zero', () => {
      expect(mulCeil(1, parseDecimal('0.000001'))).to.equal(1);
      expect(mulCeil(0, parseDecimal('0.25'))).to.equal(0);
    });

    it('refuses negative or fractional token counts', () => {
      expect(() => mulCeil(-1, parseDecimal('1'))).to.throw(RangeError);
      expect(() => mulCeil(1.5, parseDecimal('1'))).to.throw(RangeError);
    });

    it('is the least integer not below tokens × factor', () => {
      fc.assert(
        fc.property(fc.nat({ max: 10_000_000 }), fc.integer({ min: 1, max: 100_000_000 }), fc.integer({ min: 0, max: 6 }), (tokens, units, scale) => {
          const factor = { units: BigInt(units), scale, text: '' };
          const result = BigInt(mulCeil(tokens, factor));
          const exact = BigInt(tokens) * factor.units;
          const denominator = 10n ** BigInt(factor.scale);
          expect(result * denominator >= exact).to.equal(true);
          expect((result - 1n) * denominator < exact || result === 0n).to.equal(true);
        }),
      );
    });
  });
});
