/**
 * How a model reads a refusal of an amount (issue 32): it takes the first amount-looking spelling
 * in the text that it has not written yet and writes that as the next argument; refused because
 * the spelling it copied is no accepted form ("4,900.00 USD" is not an amount), it drops the
 * thousands separators and writes the same value again ("4900.00 USD"). This is the model that
 * charged an invoice 100×: it copied the first reading a hint stated, whatever it had meant.
 * The benchmark's scripted agent and test/int/held-release.int.spec.ts share it.
 */

/** An amount as a quoted string: `"4900"`, `"49.00 USD"`, `"USD 49.00"`. */
const QUOTED = /"((?:[A-Z]{3}\s*)?\d[\d,]*(?:\.\d+)?(?:\s*[A-Za-z]{3})?)"/g;
/** An amount as written in prose: `4,900.00 USD`, `49.00`, `12 EUR` (bare digits alone are no amount: `step 1`, `HTTP 400`). */
const WRITTEN = /(?<![\w.,:"'-])(\d[\d,]*(?:\.\d+)?)(?:\s([A-Z]{3})\b)?(?![\w]|[.,]\d)/g;

/** Every amount-looking spelling in `text`, in the order it appears (a JSON-escaped text is read unescaped). */
export function amountSpellings(text: string): string[] {
  const plain = text.replace(/\\"/g, '"');
  const found: { at: number; end: number; spelling: string }[] = [];
  for (const m of plain.matchAll(QUOTED)) found.push({ at: m.index, end: m.index + m[0].length, spelling: m[1]! });
  for (const m of plain.matchAll(WRITTEN)) {
    const [whole, number, currency] = m;
    if (!currency && !/[.,]/.test(number!)) continue;
    const at = m.index;
    if (found.some((q) => at >= q.at && at < q.end)) continue;
    found.push({ at, end: at + whole.length, spelling: currency ? `${number} ${currency}` : number! });
  }
  const ordered = found.sort((a, b) => a.at - b.at).map((f) => f.spelling);
  return [...new Set(ordered)];
}

/**
 * The model's next spelling after a refusal: its own copy without the thousands separators when
 * the refusal says the copy is not an amount; otherwise the first amount-looking spelling in the
 * refusal it has not tried. Undefined when the refusal offers nothing new.
 */
export function nextSpelling(refusal: string, tried: readonly string[]): string | undefined {
  const plain = refusal.replace(/\\"/g, '"');
  const last = tried[tried.length - 1];
  if (last !== undefined && last.includes(',') && plain.includes(`"${last}" is not an amount`)) {
    const ungrouped = last.replace(/,/g, '');
    if (!tried.includes(ungrouped)) return ungrouped;
  }
  return amountSpellings(plain).find((s) => !tried.includes(s));
}
