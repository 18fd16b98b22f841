import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Where a page of `GET /v1/effects` ended, handed to the caller as an opaque string. Lists are
 * ordered most recently active first, ties by effect id, so a page continues strictly after the
 * last effect the previous one showed (keyset paging: no offsets that shift as effects move).
 */
export interface EffectListPosition {
  lastEventAt: number;
  effectId: string;
}

const PREFIX = 'c2.';

/**
 * List cursors are sealed: `<prefix><payload>.<MAC>`, the MAC an HMAC-SHA256 of prefix and payload
 * under a key derived from the instance secret (useCursorSecret, called by the composition root;
 * instances of one deployment share the secret, so a cursor from one is good at another and after
 * a restart). A cursor effectd never gave out — forged, edited, or from another deployment — is
 * refused (400 naming `cursor`), as docs/http-api.md ("Paging") says, not paged from.
 */
let cursorKey: Buffer = randomBytes(32);

/** Derives the cursor key from the instance secret. */
export function useCursorSecret(secret: Buffer): void {
  cursorKey = createHmac('sha256', secret).update('effectd list cursor v2').digest();
}

function macOf(text: string): string {
  return createHmac('sha256', cursorKey).update(text).digest('base64url').slice(0, 22);
}

/** `prefix` + the payload, sealed with its MAC. */
export function sealCursor(prefix: string, payload: unknown): string {
  const text = prefix + Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${text}.${macOf(text)}`;
}

/** The payload of a cursor sealed with `prefix` by this deployment, or undefined (not one, or its MAC does not match). */
export function unsealCursor(prefix: string, cursor: string): unknown {
  if (!cursor.startsWith(prefix)) return undefined;
  const dot = cursor.lastIndexOf('.');
  if (dot <= prefix.length) return undefined;
  const text = cursor.slice(0, dot);
  const given = Buffer.from(cursor.slice(dot + 1));
  const expected = Buffer.from(macOf(text));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    return JSON.parse(Buffer.from(text.slice(prefix.length), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

export function encodeEffectCursor(position: EffectListPosition): string {
  return sealCursor(PREFIX, [position.lastEventAt, position.effectId]);
}

/** The position a cursor names, or undefined when the string is not a cursor effectd gave out. */
export function decodeEffectCursor(cursor: string): EffectListPosition | undefined {
  try {
    const value: unknown = unsealCursor(PREFIX, cursor);
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [lastEventAt, effectId] = value as unknown[];
    if (typeof lastEventAt !== 'number' || !Number.isFinite(lastEventAt) || typeof effectId !== 'string' || effectId === '') return undefined;
    return { lastEventAt, effectId };
  } catch {
    return undefined;
  }
}

/** The list order: most recently active first, then by effect id. */
export function compareForList(a: EffectListPosition, b: EffectListPosition): number {
  return b.lastEventAt - a.lastEventAt || (a.effectId < b.effectId ? -1 : a.effectId > b.effectId ? 1 : 0);
}

/** Whether an effect comes after the cursor's position in the list order. */
export function isAfter(effect: EffectListPosition, position: EffectListPosition): boolean {
  return compareForList(position, effect) < 0;
}
