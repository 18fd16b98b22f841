import { describe, expect, it } from 'vitest';
import { minorUnitExponent, parseMinorUnits, writtenNumberReason } from '../../src/core/money.js';

/**
 * A refusal's hint never steers a magnitude (issue 32): an ambiguous amount is refused with its
 * readings stated as values, and every spelling a refusal shows — each quoted string and each bare
 * number in it — fed back as the next argument (as a string and as a JSON number) is either refused
 * again or lands on one of the stated readings: never silently on another amount.
 */

interface Case {
  what: string;
  reason: string;
  readings: number[];
  currency: string;
}

/** Every spelling a model could copy out of a message: quoted strings, and numbers as written. */
function spellingsIn(text: string): string[] {
  const quoted = [...text.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  const numbers = [...text.matchAll(/(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?:\s*([A-Z]{3}))?/g)].flatMap((m) => [m[1]!, ...(m[2] ? [`${m[1]} ${m[2]}`] : [])]);
  return [...new Set([...quoted, ...numbers])];
}

function lands(spelling: string, currency: string): number[] {
  const landed: number[] = [];
  const asString = parseMinorUnits(spelling, currency);
  if (asString.ok) landed.push(asString.minor);
  // JSON.parse(spelling) as a number, the way a model writing it unquoted would send it.
  if (/^\d+$/.test(spelling)) {
    const asNumber = parseMinorUnits(Number(spelling), currency);
    if (asNumber.ok) landed.push(asNumber.minor);
  }
  return landed;
}

const refusal = (input: unknown, currency: string): string => {
  const parsed = parseMinorUnits(input, currency);
  if (parsed.ok) throw new Error(`${String(input)} was accepted`);
  return parsed.reason;
};

const cases: Case[] = [
  ...['4900', '49', '1000', '7', '123456'].flatMap((digits) => ['usd', 'eur', 'kwd', 'jpy'].map((currency) => ({
    what: `"${digits}" ${currency}`, reason: refusal(digits, currency), currency,
    readings: [Number(digits) * 10 ** minorUnitExponent(currency), Number(digits)],
  }))),
  // Only a literal that reads as a whole number gets here (49.00, 4900.0); a fraction is refused before.
  ...[['49.00', 49], ['4900.0', 4900], ['7.000', 7]].flatMap(([literal, value]) => ['usd', 'kwd'].map((currency) => {
    const exponent = minorUnitExponent(currency);
    const [whole = '0', fraction = ''] = String(literal).split('.');
    return { what: `${literal} (a JSON number) ${currency}`, reason: writtenNumberReason(String(literal), Number(value), currency), currency, readings: [Number(value), Number(whole) * 10 ** exponent + Number(fraction.padEnd(exponent, '0').slice(0, exponent))] };
  })),
  // A fraction of a minor unit has one reading: the hint may spell that one value two ways.
  ...[49.5, 0.1].map((value) => ({ what: `${value} (a JSON number)`, reason: refusal(value, 'usd'), currency: 'usd', readings: [Math.round(value * 100)] })),
];

describe('every refusal hint, fed back', () => {
  it.each(cases)('$what: each spelling it shows is refused again or is one of its readings', ({ reason, readings, currency }) => {
    const spellings = spellingsIn(reason);
    for (const spelling of spellings) {
      for (const minor of lands(spelling, currency)) expect(readings, `"${spelling}" from: ${reason}`).toContain(minor);
    }
  });

  it('an ambiguous amount states both readings as values and offers neither to write', () => {
    const reason = refusal('4900', 'usd');
    expect(reason).toContain('4,900.00 USD');
    expect(reason).toContain('49.00 USD');
    expect(reason).not.toMatch(/\bwrite\b/i);
    // The hundredfold reading is grouped as people write it, which is no accepted input: a copy is refused again.
    expect(parseMinorUnits('4,900.00 USD', 'usd').ok).toBe(false);
  });

  it('a test that could fail: an old-style hint offering the major reading to write lands on a value that is no reading here', () => {
    const oldHint = '"4900" is ambiguous: a string amount needs a decimal point or a currency. Write "4900.00 USD" for 4900 USD';
    const landed = spellingsIn(oldHint).flatMap((s) => lands(s, 'usd'));
    expect(landed).toContain(490_000);
    expect([4900]).not.toContain(490_000);
  });
});
