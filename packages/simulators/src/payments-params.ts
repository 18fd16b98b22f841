import { parseMetadata } from './stripe-metadata.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string; param?: string };

export interface ChargeParams {
  amount: number;
  currency: string;
  description: string | null;
  metadata: Record<string, string>;
}

export interface RefundParams {
  charge: string;
  amount: number | undefined;
  reason: string | null;
  metadata: Record<string, string>;
}

type Body = Record<string, unknown>;

const invalid = (message: string, param?: string): { ok: false; message: string; param?: string } => ({
  ok: false,
  message,
  param,
});

export function parseChargeParams(body: unknown): Parsed<ChargeParams> {
  const known = knownParams(body, ['amount', 'currency', 'description', 'metadata']);
  if (!known.ok) return known;
  const b = known.value;
  const amount = positiveInteger(b.amount, 'amount', true);
  if (!amount.ok) return amount;
  if (b.currency === undefined) return invalid('Missing required param: currency.', 'currency');
  if (typeof b.currency !== 'string' || !/^[a-zA-Z]{3}$/.test(b.currency)) {
    return invalid(`Invalid currency: ${String(b.currency)}.`, 'currency');
  }
  if (b.description !== undefined && b.description !== null && typeof b.description !== 'string') {
    return invalid('Invalid string: description.', 'description');
  }
  const metadata = parseMetadata(b.metadata);
  if (!metadata.ok) return metadata;
  return {
    ok: true,
    value: {
      amount: amount.value as number,
      currency: b.currency.toLowerCase(),
      description: (b.description as string | undefined) ?? null,
      metadata: metadata.value,
    },
  };
}

export function parseRefundParams(body: unknown): Parsed<RefundParams> {
  const known = knownParams(body, ['charge', 'amount', 'reason', 'metadata']);
  if (!known.ok) return known;
  const b = known.value;
  if (typeof b.charge !== 'string' || b.charge === '') return invalid('Missing required param: charge.', 'charge');
  const amount = positiveInteger(b.amount, 'amount', false);
  if (!amount.ok) return amount;
  const reasons = ['duplicate', 'fraudulent', 'requested_by_customer'];
  if (b.reason !== undefined && !reasons.includes(b.reason as string)) {
    return invalid(`Invalid reason: must be one of ${reasons.join(', ')}.`, 'reason');
  }
  const metadata = parseMetadata(b.metadata);
  if (!metadata.ok) return metadata;
  return {
    ok: true,
    value: { charge: b.charge, amount: amount.value, reason: (b.reason as string | undefined) ?? null, metadata: metadata.value },
  };
}

function knownParams(body: unknown, allowed: string[]): Parsed<Body> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return invalid('The request body must be an object.');
  const unknown = Object.keys(body).find((k) => !allowed.includes(k));
  if (unknown !== undefined) return invalid(`Received unknown parameter: ${unknown}`, unknown);
  return { ok: true, value: body as Body };
}

function positiveInteger(value: unknown, param: string, required: boolean): Parsed<number | undefined> {
  if (value === undefined) return required ? invalid(`Missing required param: ${param}.`, param) : { ok: true, value: undefined };
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) return invalid(`Invalid integer: ${String(value)}`, param);
  if (n < 1) return invalid('This value must be greater than or equal to 1.', param);
  if (n > 99_999_999) return invalid('Amount must be no more than 99999999.', param);
  return { ok: true, value: n };
}

