import { describe, expect, it } from 'vitest';
import { parseMinorUnits } from '../../src/core/money.js';
import { amountSpellings, nextSpelling } from '../../packages/bench/src/respelling.js';

// Refusals as effectd and a baseline (the same schema, no ledger) answer them (issue 32).
const ambiguous = 'payments.charge for invoice INV-X from step 1 may have happened and is being checked. args do not fit tool payments.charge: args.amount: "4900" is ambiguous: it reads as 49.00 USD (4900 minor units) or as 4,900.00 USD, and nothing is sent on a guess. Send the amount meant as a JSON integer of minor units, or a string with a decimal point or a currency code';
const notAnAmount = 'args do not fit tool payments.charge: args.amount: "4,900.00 USD" is not an amount: send a JSON integer of minor units, or a string with a decimal point or a currency code';
const baseline = 'HTTP 400: {"error":"invalid arguments for payments.charge: \\"4900\\" is ambiguous: it reads as 49.00 USD (4900 minor units) or as 4,900.00 USD, and nothi…';

describe('the respelling model (how a model copies an amount out of a refusal)', () => {
  it('finds amount-looking spellings in order, quoted or written with a decimal point or a currency, and not step numbers, statuses, dates or ids', () => {
    expect(amountSpellings(ambiguous)).toEqual(['4900', '49.00 USD', '4,900.00 USD']);
    expect(amountSpellings(notAnAmount)).toEqual(['4,900.00 USD']);
    expect(amountSpellings(baseline)).toEqual(['4900', '49.00 USD', '4,900.00 USD']);
    expect(amountSpellings('unknown: step 1 (reference eff_7bb8), answer expected by 2026-12-02T06:08:56.798Z; HTTP 400; receipt ch_0_000001.')).toEqual([]);
  });

  it('copies the first reading it has not written (the smaller one, stated first), then drops the thousands separators when the copy is not an amount', () => {
    expect(nextSpelling(ambiguous, ['4900'])).toBe('49.00 USD');
    expect(nextSpelling(baseline, ['4900'])).toBe('49.00 USD');
    // A model that skips the first reading copies the grouped one, refused, then drops its separators:
    expect(nextSpelling(ambiguous, ['4900', '49.00 USD'])).toBe('4,900.00 USD');
    expect(nextSpelling(notAnAmount, ['4900', '4,900.00 USD'])).toBe('4900.00 USD');
    expect(nextSpelling('HTTP 400: {"error":"invalid arguments for payments.charge: \\"4,900.00 USD\\" is not an amount: send a JSON integer of minor units (4900 = 49.00) or a string wit…', ['4900', '4,900.00 USD'])).toBe('4900.00 USD');
    // …which is the hundredfold reading, accepted: what the model charged.
    expect(parseMinorUnits('4900.00 USD', 'usd')).toEqual({ ok: true, minor: 490_000, currency: 'usd' });
    expect(nextSpelling('nothing here', ['4900'])).toBeUndefined();
  });
});
