/**
 * The one identifier rule (issue 27, rule 5): every name a caller gives effectd — a workflow id, a
 * step, a slot, a tenant, a tool, an effect reference — is held to it at every door (HTTP bodies
 * and URLs, the Kafka codec, MCP `_meta`, the CLI, the SDK's URL helpers), so whatever one door
 * accepts every other can name again. An identifier is text that survives a trip through one URL
 * path segment (`encodeURIComponent`, then the URL parser, then decoding) unchanged:
 *
 *   - not empty, at most the field's length;
 *   - well-formed Unicode (no lone UTF-16 surrogate: no encoding can carry one);
 *   - no control characters (U+0000–U+001F, U+007F–U+009F): invisible in logs and terminals, and
 *     cut or refused by URL parsers, headers and shells;
 *   - not `.` or `..`: `encodeURIComponent` leaves dots as they are and every URL parser removes
 *     those segments (`/v1/workflows/..` is `/v1/`), so no URL can name them.
 *
 * Pure (no zod, no Node API): the SDK, the CLI and the console share it; src/core/effect-command.ts
 * makes its zod fields of it.
 */
import { EffectdError } from './errors.js';

/** The identifier fields and their longest length, in characters. */
export const IDENTIFIER_MAX = {
  workflowId: 256,
  step: 128,
  slot: 128,
  tenant: 128,
  tool: 256,
  effectId: 256,
  reference: 256,
  receipt: 256,
} as const;

export type IdentifierField = keyof typeof IDENTIFIER_MAX;

/** A lone UTF-16 surrogate: text that no encoding (UTF-8, a URI, a stream name) can carry. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/** Well-formed Unicode text (no lone surrogate). */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** The allowed form, as every refusal states it. */
export function identifierForm(field: string, max: number): string {
  return `${field} is 1–${max} characters of text without control characters, other than "." and ".." (e.g. "run-7f3a", "charge", "alice@example.com")`;
}

/** Why `value` is not an identifier for `field`, or undefined when it is one. Only strings are judged here. */
export function identifierProblem(field: string, value: string, max: number = IDENTIFIER_MAX[field as IdentifierField] ?? 256): string | undefined {
  const allowed = identifierForm(field, max);
  if (value === '') return `${field} must not be empty: ${allowed}`;
  if (value.length > max) return `${field} is at most ${max} characters (this one has ${value.length}): ${allowed}`;
  if (!isWellFormedText(value)) return `${field} must be well-formed Unicode text: it contains a lone surrogate (half of a UTF-16 pair), which no encoding can carry; ${allowed}`;
  const control = CONTROL.exec(value);
  if (control) return `${field} must not contain control characters (U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at position ${control.index}); ${allowed}`;
  if (value === '.' || value === '..') return `${field} must not be "${value}": no URL can name it (a path segment "${value}" means this or the parent directory and is removed); ${allowed}`;
  return undefined;
}

/** The identifier itself, or an `invalid_command` naming the field and the allowed form; for callers without zod (the SDK, the CLI). */
export function checkIdentifier(field: IdentifierField, value: unknown): string {
  const problem = typeof value === 'string'
    ? identifierProblem(field, value, IDENTIFIER_MAX[field])
    : `${field} must be a string, not ${value === null ? 'null' : typeof value}; ${identifierForm(field, IDENTIFIER_MAX[field])}`;
  if (problem) throw new EffectdError('invalid_command', problem, { fields: [{ path: field, message: problem }] });
  return value as string;
}

/** One path segment naming `value` (checked by the rule first): what every URL helper puts between slashes. */
export function pathSegment(field: IdentifierField, value: unknown): string {
  return encodeURIComponent(checkIdentifier(field, value));
}
