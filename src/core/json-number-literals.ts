/**
 * How JSON numbers were written, for the ingresses that keep the request text (HTTP).
 *
 * JSON.parse reads `49.00` and `49` as the same number, but the person who writes 49.00 means
 * something else: for a money field, where a JSON number is minor units, 49.00 would quietly become
 * 0.49. Node 20's JSON.parse offers no source text (the reviver's `context.source` needs a V8 flag),
 * so the ingress scans the text once, losslessly, for number literals written with a decimal point
 * or an exponent whose value is a whole number, and remembers them against the object holding them
 * and the key. A schema that cares (money fields, src/core/arg-fields.ts) asks `writtenAs`; every
 * other consumer sees the plain number, as before. Kafka carries a protobuf Struct, whose numbers
 * are doubles: there 49.00 and 49 are the same value by definition, so nothing is remembered.
 */

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
/** Text with none of these cannot hold such a literal: the scan is skipped. */
const MAYBE = /[0-9]\.[0-9]|[0-9][eE]/;

/** A container being scanned: the object or array JSON.parse made of it (undefined inside an earlier duplicate's value that did not survive). */
type Frame = { kind: 'object'; container: Record<string, unknown> | undefined; key: string | undefined; expectKey: boolean } | { kind: 'array'; container: unknown[] | undefined; index: number };

const written = new WeakMap<object, Map<string, string>>();

/**
 * Remembers, for `parsed` (what JSON.parse made of `text`, valid JSON), how its number literals
 * written with a decimal point or an exponent whose value is a whole number were written, against
 * the object holding each and its key. One pass over the text, walking `parsed` alongside it (no
 * paths are built: linear in the text at any nesting depth). A duplicated key ends as JSON.parse
 * ends it: the last occurrence decides. Returns how many it remembered.
 */
export function rememberWrittenNumbers(parsed: unknown, text: string): number {
  if (parsed === null || typeof parsed !== 'object' || !MAYBE.test(text)) return 0;
  const found = new Map<object, Map<string, string>>();
  const stack: Frame[] = [];
  /** Where the value starting now lands in `parsed`: its holder and key, and the value there. */
  const valueStarts = (): { holder: object; key: string; value: unknown } | undefined => {
    const top = stack[stack.length - 1];
    if (!top) return undefined;
    if (top.kind === 'array') {
      top.index += 1;
      return top.container && top.index < top.container.length ? { holder: top.container, key: String(top.index), value: top.container[top.index] } : undefined;
    }
    return top.container && top.key !== undefined && Object.hasOwn(top.container, top.key) ? { holder: top.container, key: top.key, value: top.container[top.key] } : undefined;
  };
  /** A later occurrence at the same place replaces what an earlier one left. */
  const forget = (at: { holder: object; key: string } | undefined) => {
    if (at) found.get(at.holder)?.delete(at.key);
  };
  const open = (kind: 'object' | 'array') => {
    const at = valueStarts();
    forget(at);
    const value = stack.length === 0 ? parsed : at?.value;
    if (kind === 'object') stack.push({ kind, container: value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined, key: undefined, expectKey: true });
    else stack.push({ kind, container: Array.isArray(value) ? value : undefined, index: -1 });
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top?.kind === 'object' && top.expectKey) {
        top.key = JSON.parse(text.slice(i, j + 1)) as string;
        top.expectKey = false;
      } else {
        forget(valueStarts());
      }
      i = j + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      open(c === '{' ? 'object' : 'array');
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'object') top.expectKey = true;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const literal = NUMBER.exec(text)?.[0];
      if (literal) {
        const at = valueStarts();
        forget(at);
        if (at && /[.eE]/.test(literal) && Number.isInteger(Number(literal))) {
          const keys = found.get(at.holder) ?? new Map<string, string>();
          keys.set(at.key, literal);
          found.set(at.holder, keys);
        }
        i += literal.length;
        continue;
      }
    } else if (c === 't' || c === 'f' || c === 'n') {
      forget(valueStarts());
      i += c === 'f' ? 5 : 4;
      continue;
    }
    i += 1;
  }
  let count = 0;
  for (const [holder, keys] of found) {
    for (const [key, literal] of keys) {
      // An earlier duplicate's value may have left a key the surviving value does not have.
      if (!Object.hasOwn(holder, key) || (holder as Record<string, unknown>)[key] !== Number(literal)) continue;
      const known = written.get(holder) ?? new Map<string, string>();
      known.set(key, literal);
      written.set(holder, known);
      count += 1;
    }
  }
  return count;
}

/** How the number at `holder[key]` was written, when it was a whole number written with a decimal point or an exponent. */
export function writtenAs(holder: unknown, key: string): string | undefined {
  return holder !== null && typeof holder === 'object' ? written.get(holder)?.get(key) : undefined;
}
