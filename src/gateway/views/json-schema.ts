import { z } from 'zod';
import { argsField } from '../../core/effect-command.js';
import { FIELD_NOTES } from './command-notes.js';

/** JSON Schema as the OpenAPI document and the catalogs carry it. */
export type JsonSchema = Record<string, unknown>;

/**
 * A zod schema as JSON Schema 2020-12 (the dialect of OpenAPI 3.1). `input` for what a caller
 * sends (before defaults and transforms), `output` for what effectd answers. Refinements JSON
 * Schema cannot say (well-formed text, reserved keys) stay in zod, and in the descriptions.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      // A tool's arguments are checked by z.custom (the very object received travels on): say what it is.
      if (zodSchema === argsField) Object.assign(jsonSchema, { type: 'object' });
      const note = FIELD_NOTES.get(zodSchema);
      if (note && jsonSchema.description === undefined) jsonSchema.description = note;
    },
  });
  return rest;
}
