import { z } from 'zod';
import { EffectdError } from '../core/errors.js';
import type { JsonSchema } from '../gateway/views/json-schema.js';

/**
 * The one identity word a model may write, only where effectd derives a call's identity from its
 * content (`--mcp-identity-fallback content`, the default): `effectd_repeat`, the reason an
 * identical call is wanted again as another effect (the second charge the user asked for). Absent,
 * an identical call within the window is the same effect (a re-issue after a lost reply costs
 * nothing); present, the reason is part of the step and declares the repeat, so re-sending that
 * repeat is again one effect. It is never the effect's identity on its own, and a call whose
 * `_meta` names its effect ignores it (the harness declares repeats there, `dev.effectd/repeat`).
 * It is taken out of the arguments before the contract's schema reads them.
 */
export const REPEAT_ARGUMENT = 'effectd_repeat';

const EXAMPLE = 'the user asked for a second charge of INV-1';

export const repeatArgumentSchema = z.string().trim().min(1).max(200);

/** The property added to each tool's inputSchema; its example is checked by repeatArgumentSchema (test/unit/mcp-tool-descriptions.unit.spec.ts). */
export const REPEAT_ARGUMENT_PROPERTY: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: `Leave this out, except to do the very same call again ON PURPOSE as another effect: then say why, differently for each repeat (e.g. "${EXAMPLE}"). Never set it when sending again a call whose answer you did not get: that is the same call, and effectd answers it from its ledger without doing it twice.`,
  examples: [EXAMPLE],
};

/** A tool's inputSchema with the repeat argument (a copy; the contract's schema is untouched). */
export function withRepeatArgument(schema: JsonSchema): JsonSchema {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return { ...schema, properties: { ...properties, [REPEAT_ARGUMENT]: REPEAT_ARGUMENT_PROPERTY } };
}

/** The call's arguments without the repeat argument, and its reason (refused when malformed). */
export function takeRepeat(args: unknown): { args: unknown; repeat?: string } {
  if (args === null || typeof args !== 'object' || Array.isArray(args) || !(REPEAT_ARGUMENT in args)) return { args };
  const { [REPEAT_ARGUMENT]: given, ...rest } = args as Record<string, unknown>;
  if (given === undefined) return { args: rest };
  const parsed = repeatArgumentSchema.safeParse(given);
  if (!parsed.success) {
    throw new EffectdError('invalid_command', `args.${REPEAT_ARGUMENT} is the reason this identical call is wanted again as another effect: a non-empty string of at most 200 characters, not ${JSON.stringify(given)}`, {
      fields: [{ path: `args.${REPEAT_ARGUMENT}`, message: 'a non-empty string of at most 200 characters' }],
    });
  }
  return { args: rest, repeat: parsed.data };
}
