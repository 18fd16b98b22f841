import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argsSchema } from '../../src/core/arg-fields.js';
import { rememberWrittenNumbers, writtenAs } from '../../src/core/json-number-literals.js';
import { parseMinorUnits } from '../../src/core/money.js';

/** Issue 13, item 6: an amount has one meaning or is refused with the accepted forms. */
describe('parseMinorUnits: what an amount means', () => {
  const ok = (input: unknown, currency?: string) => parseMinorUnits(input, currency);

  it('a JSON number is minor units; a string with a decimal point or a currency is major units', () => {
    expect(ok(4900)).toEqual({ ok: true, minor: 4900 });
    expect(ok(0)).toEqual({ ok: true, minor: 0 });
    expect(ok('49.00')).toEqual({ ok: true, minor: 4900 });
    expect(ok('49.5')).toEqual({ ok: true, minor: 4950 });
    expect(ok(' 49.00 USD ')).toEqual({ ok: true, minor: 4900, currency: 'usd' });
    expect(ok('USD 49.00')).toEqual({ ok: true, minor: 4900, currency: 'usd' });
    expect(ok('49 USD')).toEqual({ ok: true, minor: 4900, currency: 'usd' });
    expect(ok('4900 JPY')).toEqual({ ok: true, minor: 4900, currency: 'jpy' });
    expect(ok('1.234 KWD')).toEqual({ ok: true, minor: 1234, currency: 'kwd' });
    expect(ok('49.00', 'kwd')).toEqual({ ok: true, minor: 49000 });
  });

  it('a string of bare digits is refused, with both readings and the accepted forms', () => {
    // Both readings as values, neither offered to write (test/unit/refusal-hints.unit.spec.ts feeds every spelling back).
    expect(ok('49')).toEqual({ ok: false, reason: '"49" is ambiguous: it reads as 0.49 USD (49 minor units) or as 49.00 USD, and nothing is sent on a guess. Send the amount meant as a JSON integer of minor units, or a string with a decimal point or a currency code' });
    expect(ok('4900', 'jpy')).toMatchObject({ ok: false, reason: expect.stringMatching(/^"4900" is ambiguous: it reads as 4,900 JPY, but a string amount is accepted only with a decimal point or a currency code/) });
    expect(ok(' 7 ', 'kwd')).toMatchObject({ ok: false, reason: expect.stringMatching(/reads as 0\.007 KWD \(7 minor units\) or as 7\.000 KWD/) });
  });

  it('a fractional JSON number is refused: JSON numbers are minor units', () => {
    expect(ok(49.5)).toEqual({ ok: false, reason: 'JSON numbers are minor units, and 49.5 is not a whole number of them: write 4950 (minor units) or "49.50 USD"' });
    expect(ok(0.1, 'eur')).toMatchObject({ ok: false, reason: expect.stringMatching(/write 10 \(minor units\) or "0\.10 EUR"/) });
    expect(ok(1.2345)).toMatchObject({ ok: false, reason: expect.stringMatching(/not a whole number of them: write the amount as integer minor units/) });
  });

  it('what is no amount says why: out of range, negative, too large, wrong type, unreadable', () => {
    expect(ok(Infinity)).toMatchObject({ ok: false, reason: expect.stringMatching(/^the amount is out of range \(a JSON number that large reads as Infinity\)/) });
    expect(ok(-5)).toMatchObject({ ok: false, reason: 'the amount must not be negative (got -5)' });
    expect(ok(2 ** 60)).toMatchObject({ ok: false, reason: expect.stringMatching(/too large/) });
    expect(ok(true)).toMatchObject({ ok: false, reason: expect.stringMatching(/not a boolean$/) });
    expect(ok({})).toMatchObject({ ok: false, reason: expect.stringMatching(/not an object$/) });
    expect(ok(null)).toMatchObject({ ok: false, reason: expect.stringMatching(/not null$/) });
    expect(ok([49])).toMatchObject({ ok: false, reason: expect.stringMatching(/not an array$/) });
    expect(ok('forty-nine')).toMatchObject({ ok: false, reason: expect.stringMatching(/^"forty-nine" is not an amount: send a JSON integer of minor units/) });
    expect(ok('USD 49.00 EUR')).toMatchObject({ ok: false, reason: expect.stringMatching(/names a currency twice/) });
    expect(ok('49.001')).toMatchObject({ ok: false, reason: expect.stringMatching(/more decimals than USD allows \(2\)/) });
  });

  it('property: every accepted spelling of an amount gives the same minor units; bare digit strings never parse', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 100_000_000 }), (minor) => {
      const major = `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
      for (const spelling of [minor, major, `${major} USD`, `USD ${major}`]) expect(ok(spelling)).toMatchObject({ ok: true, minor });
      expect(ok(String(minor)).ok).toBe(false);
    }));
  });
});

describe('how JSON numbers were written (src/core/json-number-literals.ts)', () => {
  /** What `rememberWrittenNumbers` remembers for `text`, as [path, literal] pairs found by walking the parsed value. */
  function remembered(text: string): [string, string][] {
    const parsed = JSON.parse(text) as unknown;
    rememberWrittenNumbers(parsed, text);
    const out: [string, string][] = [];
    const walk = (node: unknown, path: string[]) => {
      if (node === null || typeof node !== 'object') return;
      for (const key of Object.keys(node)) {
        const literal = writtenAs(node, key);
        if (literal !== undefined) out.push([[...path, key].join('.'), literal]);
        walk((node as Record<string, unknown>)[key], [...path, key]);
      }
    };
    walk(parsed, []);
    return out;
  }

  it('remembers literals written with a fraction or an exponent that land on integers, against their holder and key', () => {
    const text = '{"a":49.00,"b":49,"c":49.5,"d":[1,2.0,{"e":4.9e3}],"s":"12.00 in a string","n":{"x":true,"y":null,"z":-3.0E0}}';
    expect(remembered(text)).toEqual([['a', '49.00'], ['d.1', '2.0'], ['d.2.e', '4.9e3'], ['n.z', '-3.0E0']]);
    expect(rememberWrittenNumbers(JSON.parse(text), text)).toBe(4);
    expect(writtenAs({ amount: 49 }, 'amount')).toBeUndefined();
  });

  it('handles escaped keys and strings, and a duplicated key the way JSON.parse does (the last wins)', () => {
    expect(remembered('{"a\\"b":1.0,"q":"x\\"1.0"}')).toEqual([['a"b', '1.0']]);
    expect(remembered('{"amount":49.00,"amount":49}')).toEqual([]);
    expect(remembered('{"amount":49,"amount":49.00}')).toEqual([['amount', '49.00']]);
    expect(remembered('{"a":{"amount":1.0},"a":{"amount":1}}')).toEqual([]);
    expect(remembered('{"a":{"amount":1.0},"a":{}}')).toEqual([]);
    expect(remembered('{"a":[1.0,5],"a":[1]}')).toEqual([]);
    expect(remembered('{"a":{"amount":1.0},"a":7}')).toEqual([]);
    expect(remembered('{"a":[2.0],"b":{"c":[{"amount":3.00}]}}')).toEqual([['a.0', '2.0'], ['b.c.0.amount', '3.00']]);
  });

  it('is linear at any nesting depth (a 1 MB body of nested arrays)', () => {
    const depth = 200_000;
    const text = `${'['.repeat(depth)}1.0${']'.repeat(depth)}`;
    const started = Date.now();
    expect(rememberWrittenNumbers(JSON.parse(text), text)).toBe(1);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a money field written 49.00 is refused by the tool schema; the same number from an object built in code is 49 minor units', () => {
    const schema = argsSchema({ amount: { type: 'money', currencyField: 'currency' }, currency: { type: 'currency', default: 'usd' }, count: { type: 'integer', optional: true } });
    const text = '{"amount":49.00,"count":2.0}';
    const parsed = JSON.parse(text) as Record<string, unknown>;
    rememberWrittenNumbers(parsed, text);
    const refused = schema.safeParse(parsed);
    expect(refused.success).toBe(false);
    expect(refused.error!.issues).toEqual([expect.objectContaining({ path: ['amount'], message: expect.stringMatching(/^49\.00 is ambiguous: as a JSON number it reads as 0\.49 USD \(49 minor units\), while its decimal point suggests 49\.00 USD, and nothing is sent on a guess/) })]);
    expect(schema.parse({ amount: 49, count: 2 })).toEqual({ amount: 49, currency: 'usd', count: 2 });
  });
});
