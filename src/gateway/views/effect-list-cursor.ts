import type { ListCursors } from './list-cursors.js';

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

export function encodeEffectCursor(cursors: ListCursors, position: EffectListPosition): string {
  return cursors.seal(PREFIX, [position.lastEventAt, position.effectId]);
}

/** The position a cursor names, or undefined when the string is not a cursor effectd gave out. */
export function decodeEffectCursor(cursors: ListCursors, cursor: string): EffectListPosition | undefined {
  try {
    const value: unknown = cursors.unseal(PREFIX, cursor);
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
