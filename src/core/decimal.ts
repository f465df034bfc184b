// Exact decimals for prices and unify factors. Money never passes through a
// float: a decimal is an integer `units` over 10^scale, and every product is
// taken in BigInt and rounded once, at a documented point.
import type { Decimal } from './catalog.types';

/**
 * A price per million tokens with at most 6 places is a whole number of
 * 10^-12 units per token; capping the scale bounds every intermediate BigInt
 * and matches the micro-unit resolution of stored amounts.
 */
export const MAX_DECIMAL_SCALE = 6;

const DECIMAL_TEXT = /^(-)?(\d+)(?:\.(\d+))?$/;

/**
 * Parses "16", "0.5", "-1.25" (or a JSON number such as 0.25) into an exact
 * decimal, normalised so equal values have equal `text` ("0.50" → "0.5").
 * Throws a RangeError whose message completes "<field> ..." for the caller.
 */
export function parseDecimal(value: string | number, maxScale = MAX_DECIMAL_SCALE): Decimal {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`must be a finite decimal, got ${value}`);
    text = String(value);
    // String(1e-7) is "1e-7": refuse rather than guess what the author meant.
    if (/e/i.test(text)) throw new RangeError(`must be written as a plain decimal, got ${text}`);
  } else {
    text = value.trim();
  }
  const match = DECIMAL_TEXT.exec(text);
  if (match === null) throw new RangeError(`must be a decimal like "16" or "0.5", got ${JSON.stringify(value)}`);
  const [, sign, whole = '0', rawFraction = ''] = match;
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > maxScale) {
    throw new RangeError(`must have at most ${maxScale} decimal places, got ${JSON.stringify(value)}`);
  }
  const magnitude = BigInt(whole + fraction);
  const units = sign === '-' ? -magnitude : magnitude;
  return { units, scale: fraction.length, text: formatScaled(units, fraction.length) };
}

/** An integer `units` over 10^scale as the shortest exact decimal string. */
function formatScaled(units: bigint, scale: number, minFractionDigits = 0): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  let fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  if (fraction.length < minFractionDigits) fraction = fraction.padEnd(minFractionDigits, '0');
  const body = fraction === '' ? whole : `${whole}.${fraction}`;
  return negative && /[1-9]/.test(body) ? `-${body}` : body;
}

/**
 * Micro-units as a currency amount: 1234567 → "1.234567", 1500000 → "1.5",
 * 0 → "0". `minFractionDigits` pads for display ("1.50" with 2) without
 * ever dropping a significant digit.
 */
export function formatMicros(micros: number | bigint, minFractionDigits = 0): string {
  if (typeof micros === 'number' && !Number.isSafeInteger(micros)) {
    throw new RangeError(`micro-units must be a safe integer, got ${micros}`);
  }
  return formatScaled(BigInt(micros), MAX_DECIMAL_SCALE, Math.min(minFractionDigits, MAX_DECIMAL_SCALE));
}

/** a × b, exact (its scale is the sum of theirs, trailing zeros dropped): e.g. a unify factor times a provider's multiplier. */
export function mulDecimal(a: Decimal, b: Decimal): Decimal {
  let units = a.units * b.units;
  let scale = a.scale + b.scale;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  return { units, scale, text: formatScaled(units, scale) };
}

/** A decimal amount of currency (e.g. a credit limit) in exact micro-units. */
export function toMicros(value: Decimal): bigint {
  if (value.scale > MAX_DECIMAL_SCALE) throw new RangeError(`${value.text} has more than 6 decimal places`);
  return value.units * 10n ** BigInt(MAX_DECIMAL_SCALE - value.scale);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

export function toSafeNumber(value: bigint, what: string): number {
  if (value > MAX_SAFE || value < MIN_SAFE) {
    throw new RangeError(`${what} ${value} exceeds the safe integer range`);
  }
  return Number(value);
}

export function assertTokenCount(tokens: number, what = 'token count'): void {
  if (!Number.isSafeInteger(tokens) || tokens < 0) {
    throw new RangeError(`${what} must be a non-negative safe integer, got ${tokens}`);
  }
}

/**
 * ⌈tokens × factor⌉, exact. docs/architecture.md §7 rounds unified tokens up once per call
 * and token kind, so a fractional factor never makes a call free.
 */
export function mulCeil(tokens: number, factor: Decimal): number {
  assertTokenCount(tokens);
  if (factor.units < 0n) throw new RangeError(`factor must not be negative, got ${factor.text}`);
  const numerator = BigInt(tokens) * factor.units;
  const denominator = 10n ** BigInt(factor.scale);
  return toSafeNumber((numerator + denominator - 1n) / denominator, 'unified token count');
}
