import { z } from 'zod';
import { effectdConfigSpec, httpProviderSpec, mcpProviderSpec, providerSpec } from './tool-contract.js';
import { sagaDefinitionSpec } from './saga-definition-spec.js';

/** Where the generated schema is committed (and shipped in the package). */
export const CONFIG_SCHEMA_FILE = 'config/effectd.config.schema.json';

/**
 * The JSON Schema of a JSON config file, generated from the zod spec effectd validates with, so it is
 * never kept by hand (a unit test compares it with the committed file). Generate it with
 * `effectd config schema > config/effectd.config.schema.json`.
 */
export function effectdConfigJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(effectdConfigSpec, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      // A provider is chosen by its shape (the `mcp` key) in code; for editors it is one of the two.
      if (ctx.zodSchema === providerSpec) Object.assign(ctx.jsonSchema, { anyOf: [inputSchema(httpProviderSpec), inputSchema(mcpProviderSpec)] });
      if (ctx.zodSchema === sagaDefinitionSpec) {
        for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
        Object.assign(ctx.jsonSchema, { not: {}, description: 'Saga definitions are code: declare them in an ES module config (effectd.config.mjs) with defineSaga from \'effectd\'.' });
      }
    },
  }) as Record<string, unknown>;
  return { $schema: schema.$schema, title: 'effectd configuration', description: 'Providers, tools (their contracts) and settings of an effectd configuration file. Generated from effectd\'s zod spec (src/config/tool-contract.ts).', ...withoutKey(schema, '$schema') };
}

function inputSchema(spec: z.ZodType): Record<string, unknown> {
  return withoutKey(z.toJSONSchema(spec, { io: 'input' }) as Record<string, unknown>, '$schema');
}

function withoutKey(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = object;
  return rest;
}

export function configSchemaText(): string {
  return `${JSON.stringify(effectdConfigJsonSchema(), null, 2)}\n`;
}
