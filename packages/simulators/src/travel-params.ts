import type { Parsed } from './payments-params.js';
import { parseMetadata } from './stripe-metadata.js';

export interface FlightHoldParams {
  flight: string;
  passenger: string;
  date: string;
  metadata: Record<string, string>;
}

export interface HotelBookingParams {
  hotel: string;
  guest: string;
  checkIn: string;
  nights: number;
  metadata: Record<string, string>;
}

/** The body of a release or a cancellation: only a reference to find it again. */
export interface UndoParams {
  metadata: Record<string, string>;
}

type Body = Record<string, unknown>;

const invalid = (message: string, param?: string): { ok: false; message: string; param?: string } => ({ ok: false, message, param });

export function parseFlightHoldParams(body: unknown): Parsed<FlightHoldParams> {
  const known = knownParams(body, ['flight', 'passenger', 'date', 'metadata']);
  if (!known.ok) return known;
  const b = known.value;
  for (const param of ['flight', 'passenger'] as const) {
    const text = requiredString(b[param], param);
    if (!text.ok) return text;
  }
  const date = isoDate(b.date, 'date');
  if (!date.ok) return date;
  const metadata = parseMetadata(b.metadata);
  if (!metadata.ok) return metadata;
  return { ok: true, value: { flight: b.flight as string, passenger: b.passenger as string, date: date.value, metadata: metadata.value } };
}

export function parseHotelBookingParams(body: unknown): Parsed<HotelBookingParams> {
  const known = knownParams(body, ['hotel', 'guest', 'checkIn', 'nights', 'metadata']);
  if (!known.ok) return known;
  const b = known.value;
  for (const param of ['hotel', 'guest'] as const) {
    const text = requiredString(b[param], param);
    if (!text.ok) return text;
  }
  const checkIn = isoDate(b.checkIn, 'checkIn');
  if (!checkIn.ok) return checkIn;
  if (b.nights === undefined) return invalid('Missing required param: nights.', 'nights');
  // Form bodies carry every scalar as a string, as Stripe-style parameters do.
  const nights = typeof b.nights === 'string' && /^\d+$/.test(b.nights) ? Number(b.nights) : b.nights;
  if (typeof nights !== 'number' || !Number.isSafeInteger(nights) || nights < 1 || nights > 365) {
    return invalid(`Invalid nights: ${String(b.nights)} (an integer from 1 to 365).`, 'nights');
  }
  const metadata = parseMetadata(b.metadata);
  if (!metadata.ok) return metadata;
  return {
    ok: true,
    value: { hotel: b.hotel as string, guest: b.guest as string, checkIn: checkIn.value, nights, metadata: metadata.value },
  };
}

export function parseUndoParams(body: unknown): Parsed<UndoParams> {
  const known = knownParams(body, ['metadata']);
  if (!known.ok) return known;
  const metadata = parseMetadata(known.value.metadata);
  if (!metadata.ok) return metadata;
  return { ok: true, value: { metadata: metadata.value } };
}

function knownParams(body: unknown, allowed: string[]): Parsed<Body> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return invalid('The request body must be an object.');
  const unknown = Object.keys(body).find((k) => !allowed.includes(k));
  if (unknown !== undefined) return invalid(`Received unknown parameter: ${unknown}`, unknown);
  return { ok: true, value: body as Body };
}

function requiredString(value: unknown, param: string): Parsed<string> {
  if (value === undefined || value === null || value === '') return invalid(`Missing required param: ${param}.`, param);
  if (typeof value !== 'string') return invalid(`Invalid string: ${param}.`, param);
  return { ok: true, value };
}

/** `YYYY-MM-DD`, and a day that exists. */
function isoDate(value: unknown, param: string): Parsed<string> {
  const text = requiredString(value, param);
  if (!text.ok) return text;
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.value);
  const day = match === null ? undefined : new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  if (day === undefined || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text.value) {
    return invalid(`Invalid date: ${text.value} (expected YYYY-MM-DD).`, param);
  }
  return text;
}

