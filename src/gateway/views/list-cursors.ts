import { createHmac, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import { invalidCommand } from '../../core/errors.js';

/**
 * List cursors are sealed: `<prefix><payload>.<MAC>`, the MAC an HMAC-SHA256 of prefix and payload
 * under a key derived from the instance secret (instances of one deployment share the secret, so a
 * cursor from one is good at another and after a restart). A cursor effectd never gave out —
 * forged, edited, or from another deployment — is refused (400 naming `cursor`), as
 * docs/http-api.md ("Paging") says, not paged from. One per application (the composition root
 * makes it), so two applications in one process each keep their own key.
 */
export class ListCursors {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('effectd list cursor v2').digest();
  }

  /** `prefix` + the payload, sealed with its MAC. */
  seal(prefix: string, payload: unknown): string {
    const text = prefix + Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${text}.${this.macOf(text)}`;
  }

  /** The payload of a cursor sealed with `prefix` by this deployment, or undefined (not one, or its MAC does not match). */
  unseal(prefix: string, cursor: string): unknown {
    if (!cursor.startsWith(prefix)) return undefined;
    const dot = cursor.lastIndexOf('.');
    if (dot <= prefix.length) return undefined;
    const text = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.macOf(text));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      return JSON.parse(Buffer.from(text.slice(prefix.length), 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
  }

  private macOf(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url').slice(0, 22);
  }
}

const NOT_A_CURSOR = 'not a cursor of this list: pass the nextCursor of the previous page unchanged';

/**
 * A list's query, parsed, with the position its cursor names (unsealed once): one 400 naming every
 * field that is wrong, `cursor` among them when it is not one this deployment gave out.
 */
export function listQuery<Q extends { cursor?: string | undefined }, P>(schema: z.ZodType<Q>, query: unknown, decode: (cursor: string) => P | undefined): { data: Q; after: P | undefined } {
  const parsed = schema.safeParse(query);
  const raw = (query as { cursor?: unknown } | null | undefined)?.cursor;
  const after = typeof raw === 'string' ? decode(raw) : undefined;
  const issues = [...(parsed.success ? [] : parsed.error.issues), ...(typeof raw === 'string' && after === undefined ? [{ path: ['cursor'], message: NOT_A_CURSOR }] : [])];
  if (!parsed.success || issues.length > 0) throw invalidCommand('invalid query', issues);
  return { data: parsed.data, after };
}
