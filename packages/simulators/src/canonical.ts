import { createHash } from 'node:crypto';

/**
 * Key-order-independent JSON. With `scalarsAsStrings`, 500 and "500" are the same value, as they are
 * to Stripe, whose form-encoded parameters are all strings.
 */
export function canonicalJson(value: unknown, scalarsAsStrings = false): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, scalarsAsStrings)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v, scalarsAsStrings)}`).join(',')}}`;
  }
  if (scalarsAsStrings && (typeof value === 'number' || typeof value === 'boolean')) return JSON.stringify(String(value));
  return JSON.stringify(value ?? null);
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function fingerprint(value: unknown, scalarsAsStrings = false): string {
  return sha256Hex(canonicalJson(value, scalarsAsStrings));
}
