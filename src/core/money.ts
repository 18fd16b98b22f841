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

/** The accepted forms, for every message that refuses an amount. */
export const AMOUNT_FORMS = 'a JSON integer of minor units (4900 = 49.00) or a string with a decimal point or a currency ("49.00", "49.00 USD", "USD 49.00", "49 USD")';

/**
 * What a tool's inputSchema says of an amount (src/gateway/views/tool-args-schema.ts): the forms,
 * then examples as JSON literals after "e.g.", each accepted by parseMinorUnits (checked by
 * test/unit/mcp-tool-descriptions.unit.spec.ts). A model copies examples: none of them is refused.
 */
export const AMOUNT_EXAMPLES: readonly (number | string)[] = [4900, '49.00', '49.00 USD', 'USD 49.00', '49 USD'];
export const AMOUNT_DESCRIPTION = `a JSON integer of minor units (cents), or a string in major units with a decimal point or a currency code, never bare digits in a string. All of these are 49 US dollars, e.g. ${AMOUNT_EXAMPLES.map((e) => JSON.stringify(e)).join(', ')}`;

/** The strings MONEY_TEXT reads as an amount, without the ones it refuses (bare digits, a currency twice): the string branch's JSON Schema pattern. */
export const AMOUNT_TEXT_PATTERN = '^\\s*(?:[A-Za-z]{3}\\s*[0-9]+(?:\\.[0-9]+)?|[0-9]+\\.[0-9]+(?:\\s*[A-Za-z]{3})?|[0-9]+\\s*[A-Za-z]{3})\\s*$';

/**
 * How a refusal names the forms, with no example amount in it: a hint is fed back by models, and an
 * example value there would be a value the agent never meant.
 */
export const AMOUNT_FORMS_PLAIN = 'a JSON integer of minor units, or a string with a decimal point or a currency code';

/**
 * An amount as a reading stated in a refusal, grouped the way people write it ("4,900.00 USD"): a
 * value, never a spelling to copy (the grouped form is not an accepted input, so a copy is refused again).
 */
export function readingText(minor: number, currency: string): string {
  const exponent = minorUnitExponent(currency);
  const major = majorText(minor, exponent);
  const [whole = '0', fraction] = major.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${fraction === undefined ? grouped : `${grouped}.${fraction}`} ${currency.toUpperCase()}`;
}

/** `minor` minor units written in major units, e.g. 4900 → "49.00", for suggestions in messages. */
function majorText(minor: number, exponent: number): string {
  if (exponent === 0) return String(minor);
  const digits = String(minor).padStart(exponent + 1, '0');
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/**
 * An amount in minor units, from the forms that cannot be misread (docs/tool-reference.md, "Amounts"):
 * - a JSON number is minor units, always: a whole number ≥ 0 (4900 = USD 49.00);
 * - a string is major units and must say so, with a decimal point or a currency: "49.00",
 *   "49.00 USD", "USD 49.00", "49 USD". A string of bare digits ("49") is refused: whether it
 *   means 49 or 4900 minor units is a guess, and a guess charges the wrong amount.
 * The scale comes from the currency written in the text, else the caller's (the currency field), else USD.
 */
export function parseMinorUnits(input: unknown, fallbackCurrency: string | undefined): MoneyParse {
  const fallback = (fallbackCurrency ?? 'usd').toLowerCase();
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) {
      return { ok: false, reason: `the amount is out of range (a JSON number that large reads as ${input}); send ${AMOUNT_FORMS_PLAIN}` };
    }
    if (!Number.isInteger(input)) {
      const exponent = minorUnitExponent(fallback);
      const scaled = Math.round(input * 10 ** exponent);
      const exact = input >= 0 && Math.abs(scaled - input * 10 ** exponent) < 1e-6 && Number.isSafeInteger(scaled);
      const suggestion = exact ? `write ${scaled} (minor units) or "${majorText(scaled, exponent)} ${fallback.toUpperCase()}"` : 'write the amount as integer minor units (e.g. 4900) or a decimal string (e.g. "49.00 USD")';
      return { ok: false, reason: `JSON numbers are minor units, and ${input} is not a whole number of them: ${suggestion}` };
    }
    if (input < 0) return { ok: false, reason: `the amount must not be negative (got ${input})` };
    if (!Number.isSafeInteger(input)) return { ok: false, reason: `the amount ${input} is too large (at most ${Number.MAX_SAFE_INTEGER} minor units)` };
    return { ok: true, minor: input };
  }
  if (typeof input !== 'string') {
    return { ok: false, reason: `the amount must be ${AMOUNT_FORMS_PLAIN}, not ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input === 'object' ? 'an object' : `a ${typeof input}`}` };
  }
  const match = MONEY_TEXT.exec(input.trim());
  if (!match) return { ok: false, reason: `"${input}" is not an amount: send ${AMOUNT_FORMS_PLAIN}` };
  const [, prefixCurrency, whole, fraction, suffixCurrency] = match;
  if (prefixCurrency && suffixCurrency) return { ok: false, reason: `"${input}" names a currency twice` };
  const currency = (prefixCurrency ?? suffixCurrency)?.toLowerCase();
  const scale = currency ?? fallback;
  const exponent = minorUnitExponent(scale);
  if (fraction === undefined && !currency) {
    // Two readings a hundredfold (or more) apart: both are stated as values, neither is offered to copy.
    const asMajor = readingText(Number(whole) * 10 ** exponent, scale);
    const asMinor = readingText(Number(whole), scale);
    // The smaller reading first: a model that copies the first value it sees then under-charges, never charges a hundredfold.
    const readings = exponent === 0 ? `it reads as ${asMajor}, but a string amount is accepted only with a decimal point or a currency code` : `it reads as ${asMinor} (${Number(whole)} minor units) or as ${asMajor}, and nothing is sent on a guess`;
    return { ok: false, reason: `"${input}" is ambiguous: ${readings}. Send the amount meant as ${AMOUNT_FORMS_PLAIN}` };
  }
  if (fraction !== undefined && fraction.length > exponent) {
    return { ok: false, reason: `"${input}" has more decimals than ${scale.toUpperCase()} allows (${exponent})` };
  }
  const minor = Number(whole) * 10 ** exponent + Number((fraction ?? '').padEnd(exponent, '0') || '0');
  if (!Number.isSafeInteger(minor)) return { ok: false, reason: `the amount "${input}" is too large` };
  return currency ? { ok: true, minor, currency } : { ok: true, minor };
}

/**
 * The refusal of a JSON number written with a decimal point or an exponent that reads as a whole
 * number (49.00, 4.9e3): JSON.parse makes 49.00 into 49, i.e. 49 minor units (0.49), which is not
 * what anyone writing 49.00 means. Only ingresses that keep the request text can tell (HTTP).
 */
export function writtenNumberReason(literal: string, value: number, currency: string | undefined): string {
  const cur = (currency ?? 'usd').toLowerCase();
  const exponent = minorUnitExponent(cur);
  if (/[eE]/.test(literal)) {
    return `JSON numbers are minor units written as plain integers: write ${Number.isSafeInteger(value) ? value : 'the integer'} instead of ${literal}, or a decimal string such as "${Number.isSafeInteger(value) ? majorText(value, exponent) : '49.00'} ${cur.toUpperCase()}"`;
  }
  const asMajor = literal.replace(/^-/, '');
  const [whole = '0', fraction = ''] = asMajor.split('.');
  const minor = Number(whole) * 10 ** exponent + Number(fraction.slice(0, exponent).padEnd(exponent, '0') || '0');
  // Two readings (the minor units JSON says, the major units the decimal point suggests): both stated as values, neither offered to copy.
  const suggested = fraction.length <= exponent && Number.isSafeInteger(minor) ? readingText(minor, cur) : `${asMajor} ${cur.toUpperCase()}`;
  return `${literal} is ambiguous: as a JSON number it reads as ${readingText(Math.abs(value), cur)} (${Math.abs(value)} minor units), while its decimal point suggests ${suggested}, and nothing is sent on a guess. Send the amount meant as ${AMOUNT_FORMS_PLAIN}`;
}
