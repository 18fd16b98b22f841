import type { Parsed } from './payments-params.js';

const invalid = (message: string, param?: string): { ok: false; message: string; param?: string } => ({ ok: false, message, param });

/** Stripe's documented limits: 50 keys, key ≤ 40 chars without brackets, value ≤ 500 chars. */
export function parseMetadata(value: unknown): Parsed<Record<string, string>> {
  if (value === undefined || value === null || value === '') return { ok: true, value: {} };
  if (typeof value !== 'object' || Array.isArray(value)) return invalid('Invalid object', 'metadata');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 50) return invalid('You can specify up to 50 keys in metadata.', 'metadata');
  const metadata: Record<string, string> = {};
  for (const [key, raw] of entries) {
    const param = `metadata[${key}]`;
    if (key.length > 40 || /[[\]]/.test(key)) return invalid(`Invalid metadata key: ${key}`, param);
    if (!['string', 'number', 'boolean'].includes(typeof raw)) return invalid('Metadata values must be strings.', param);
    const text = String(raw);
    if (text.length > 500) return invalid('Metadata values can have up to 500 characters.', param);
    if (text !== '') metadata[key] = text;
  }
  return { ok: true, value: metadata };
}
