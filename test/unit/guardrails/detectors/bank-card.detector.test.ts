import { bankCardDetector } from '../../../../src/guardrails';
import { breakLastDigit, detectorTable, luhnNumber, luhnValidIdCard } from '../guardrail-samples';

/** A mobile number whose "86"-prefixed 13-digit form happens to pass Luhn. */
function luhnValidMobileWithCountryCode(): string {
  for (let n = 13800138000; ; n++) {
    const digits = `86${n}`;
    if (luhnNumber(digits.slice(0, -1)) === digits) return digits;
  }
}

describe('bank-card detector', () => {
  const card19 = luhnNumber('622202123456789012');
  const grouped19 = `${card19.slice(0, 4)} ${card19.slice(4, 8)} ${card19.slice(8, 12)} ${card19.slice(12, 16)} ${card19.slice(16)}`;
  const luhnId = luhnValidIdCard();
  detectorTable(bankCardDetector, {
    matches: [
      ['card 4111111111111111.', '4111111111111111'],
      ['4111 1111 1111 1111', '4111 1111 1111 1111'],
      ['4111-1111-1111-1111', '4111-1111-1111-1111'],
      ['visa 4222222222222 (13 digits)', '4222222222222'],
      [`卡号${card19}，`, card19],
      [grouped19, grouped19],
      // a trailing group that would break Luhn is not part of the card
      ['4111 1111 1111 1111 123 is the number', '4111 1111 1111 1111'],
      // 16-19 digits that pass Luhn are cards even when ID-shaped
      [luhnId, luhnId],
    ],
    misses: [
      '4111111111111112', // fails Luhn
      breakLastDigit(card19),
      '411111111111', // 12 digits
      '41111111111111111111', // 20 digits
      `9${'4111111111111111'}1`, // inside a longer run
      '4111 1111 1111', // 12 grouped digits
      luhnValidMobileWithCountryCode(), // a mobile with its country code
      '11010519491231002X', // ID number with X: its 17 digits are not a card
    ],
  });
});
