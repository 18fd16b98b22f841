/** ISO 4217 minor-unit exponents that differ from 2; every other currency uses 2. */
const EXPONENT_EXCEPTIONS: Record<string, number> = {
  bif: 0, clp: 0, djf: 0, gnf: 0, jpy: 0, kmf: 0, krw: 0, mga: 0, pyg: 0, rwf: 0, ugx: 0,
  vnd: 0, vuv: 0, xaf: 0, xof: 0, xpf: 0, bhd: 3, jod: 3, kwd: 3, omr: 3, tnd: 3,
};

export function minorUnitExponent(currency: string): number {
  return EXPONENT_EXCEPTIONS[currency.toLowerCase()] ?? 2;
}

export type MoneyParse = { ok: true; minor: number; currency?: string } | { ok: false; reason: string };

const MONEY_TEXT = /^(?:([A-Za-z]{3})\s*)?([0-9]+)(?:\.([0-9]+))?(?:\s*([A-Za-z]{3}))?$/;

/**
 * An amount in minor units from what models send: 4900, "4900", "49.00", "49.00 USD", "USD 49.00".
 * An integer (number or digits) is already minor units; a decimal point means major units.
 * `exponentFor` decides the scale from the currency written in the text, or the caller's default.
 */
export function parseMinorUnits(input: unknown, fallbackCurrency: string | undefined): MoneyParse {
  if (typeof input === 'number') {
    if (!Number.isSafeInteger(input) || input < 0) {
      return { ok: false, reason: `amount ${input} must be a non-negative integer of minor units (e.g. 4900) or a decimal string (e.g. "49.00")` };
    }
    return { ok: true, minor: input };
  }
  if (typeof input !== 'string') return { ok: false, reason: 'amount must be a number or a string' };
  const match = MONEY_TEXT.exec(input.trim());
  if (!match) return { ok: false, reason: `"${input}" is not an amount (expected e.g. 4900, "49.00" or "49.00 USD")` };
  const [, prefixCurrency, whole, fraction, suffixCurrency] = match;
  if (prefixCurrency && suffixCurrency) return { ok: false, reason: `"${input}" names a currency twice` };
  const currency = (prefixCurrency ?? suffixCurrency)?.toLowerCase();
  if (fraction === undefined) {
    const minor = Number(whole);
    if (!Number.isSafeInteger(minor)) return { ok: false, reason: `amount "${input}" is too large` };
    return currency ? { ok: false, reason: `"${input}" has a currency but no decimal point: write "${whole}.00 ${currency.toUpperCase()}" or the integer minor units` } : { ok: true, minor };
  }
  const exponent = minorUnitExponent(currency ?? fallbackCurrency ?? 'usd');
  if (fraction.length > exponent) {
    return { ok: false, reason: `"${input}" has more decimals than ${(currency ?? fallbackCurrency ?? 'usd').toUpperCase()} allows (${exponent})` };
  }
  const minor = Number(whole) * 10 ** exponent + Number(fraction.padEnd(exponent, '0') || '0');
  if (!Number.isSafeInteger(minor)) return { ok: false, reason: `amount "${input}" is too large` };
  return currency ? { ok: true, minor, currency } : { ok: true, minor };
}
