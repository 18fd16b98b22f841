import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argsSchema, type ArgFieldsSpec } from '../../src/core/arg-fields.js';
import { intentDigest, type Intent } from '../../src/core/intent.js';

const chargeFields: ArgFieldsSpec = {
  invoiceId: { type: 'string', minLength: 1 },
  amount: { type: 'money', currencyField: 'currency' },
  currency: { type: 'currency', default: 'usd' },
  description: { type: 'string', optional: true },
  metadata: { type: 'map', optional: true },
};
const charge = argsSchema(chargeFields);
const digestOf = (args: Record<string, unknown>) => {
  const canonical = charge.parse(args);
  const intent: Intent = { tool: 'payments.charge', contractVersion: 1, args: canonical, target: String(canonical.invoiceId) };
  return intentDigest(intent);
};

/** The ways a model writes the same amount. */
const major = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
const amountSpellings = (minor: number) => fc.constantFrom<unknown>(minor, major(minor), `${major(minor)} USD`, `USD ${major(minor)}`, ` ${major(minor)} `, ...(minor % 100 === 0 ? [`${minor / 100} USD`] : []));
const word = fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/);
const chargeInput = fc.record({
  invoiceId: word,
  minor: fc.integer({ min: 1, max: 10_000_000 }), // an amount is more than zero (issue 27)
  description: fc.option(fc.array(word, { minLength: 1, maxLength: 4 }), { nil: undefined }),
  metadata: fc.option(fc.dictionary(word, word, { maxKeys: 4 }), { nil: undefined }),
});

function shuffledObject(entries: [string, unknown][], order: number[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const i of order) out[entries[i]![0]] = entries[i]![1];
  return out;
}

describe('intent canonicalization', () => {
  it('4900, "49.00", "49.00 USD", "USD 49.00" and "49 USD" are one amount; whitespace and defaults do not change the digest', () => {
    const spellings = [4900, '49.00', '49.00 USD', 'USD 49.00', '49 USD', ' 49.0 '];
    const digests = new Set(spellings.map((amount) => digestOf({ invoiceId: 'inv-1', amount })));
    expect(digests.size).toBe(1);
    expect(digestOf({ invoiceId: 'inv-1', amount: 4900, currency: 'USD' })).toBe(digestOf({ invoiceId: ' inv-1 ', amount: 4900 }));
    expect(digestOf({ invoiceId: 'inv-1', amount: 4900, description: 'Your  order\n ' })).toBe(digestOf({ invoiceId: 'inv-1', amount: 4900, description: 'Your order' }));
  });

  it('rejects an amount whose written currency contradicts the currency field, naming the field', () => {
    const result = charge.safeParse({ invoiceId: 'inv-1', amount: '49.00 EUR', currency: 'usd' });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(['amount']);
  });

  it('property: canonicalization is idempotent', () => {
    fc.assert(fc.property(chargeInput, fc.nat(4), (input, pick) => {
      const spellings = [input.minor, major(input.minor), `${major(input.minor)} USD`];
      const args = { invoiceId: input.invoiceId, amount: spellings[pick % spellings.length], description: input.description?.join('  '), metadata: input.metadata };
      const once = charge.parse(args);
      expect(charge.parse(once)).toEqual(once);
    }));
  });

  it('property: the digest ignores key order and amount spelling', () => {
    fc.assert(fc.property(chargeInput, fc.context(), (input, ctx) => {
      const entries: [string, unknown][] = [['invoiceId', input.invoiceId], ['amount', input.minor], ['currency', 'usd']];
      if (input.description) entries.push(['description', input.description.join(' ')]);
      if (input.metadata) entries.push(['metadata', input.metadata]);
      const forward = shuffledObject(entries, entries.map((_, i) => i));
      const backward = shuffledObject(entries, entries.map((_, i) => entries.length - 1 - i));
      ctx.log(JSON.stringify(backward));
      expect(digestOf(backward)).toBe(digestOf(forward));
    }));
    fc.assert(fc.property(fc.integer({ min: 1, max: 1_000_000 }).chain((m) => fc.tuple(fc.constant(m), amountSpellings(m), amountSpellings(m))), ([, a, b]) => {
      expect(digestOf({ invoiceId: 'inv-9', amount: a })).toBe(digestOf({ invoiceId: 'inv-9', amount: b }));
    }));
  });

  it('property: different business values give different digests', () => {
    fc.assert(fc.property(chargeInput, chargeInput, (a, b) => {
      fc.pre(a.invoiceId !== b.invoiceId || a.minor !== b.minor);
      expect(digestOf({ invoiceId: a.invoiceId, amount: a.minor })).not.toBe(digestOf({ invoiceId: b.invoiceId, amount: b.minor }));
    }));
  });
});
