import { z } from 'zod';
import type { Tool } from '../../providers/tool-registry.js';
import { isMcpProvider, toolContractSpec, type ProviderSpec } from '../../config/tool-contract.js';
import { toolArgsJsonSchema } from './tool-args-schema.js';

/** A configured tool, as the front doors list it (MCP's tools/list, GET /v1/tools). */
export type { Tool } from '../../providers/tool-registry.js';

/**
 * `GET /v1/tools`: every configured tool, its contract as configured and the JSON Schema of its
 * arguments. A provider is described without secrets: its address without credentials or query,
 * and the names of its headers and values, never their values (an Authorization header, an API key).
 */

const providerViewSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('http'),
    name: z.string(),
    baseUrl: z.string().meta({ description: 'The provider\'s base URL, without user info or query.' }),
    headers: z.array(z.string()).meta({ description: 'Names of the headers effectd sends (values are not shown).' }),
    values: z.array(z.string()).meta({ description: 'Names of the values templates can use as `{provider.<name>}` (values are not shown).' }),
  }),
  z.object({
    kind: z.literal('mcp'),
    name: z.string(),
    transport: z.enum(['http', 'stdio']),
    url: z.string().optional().meta({ description: 'The upstream MCP server\'s URL (Streamable HTTP), without user info or query.' }),
    command: z.string().optional().meta({ description: 'The command effectd starts (stdio); its arguments and environment are not shown.' }),
    headers: z.array(z.string()).meta({ description: 'Names of the headers effectd sends (values are not shown).' }),
    values: z.array(z.string()),
  }),
]).meta({ description: 'Where the tool\'s effects go.' });

export const toolViewSchema = z.object({
  name: z.string(),
  version: z.number().int().meta({ description: 'The contract version: part of every intent, so a new version never replays an old outcome.' }),
  description: z.string(),
  reversibility: z.enum(['read', 'idempotent', 'compensable', 'irreversible']),
  provider: providerViewSchema,
  contract: toolContractSpec.meta({ description: 'The tool\'s contract as configured, with its defaults filled in (the configuration reference describes each field).' }),
  argsSchema: z.looseObject({}).meta({ description: 'JSON Schema (2020-12) of the arguments an effect command\'s `args` takes for this tool.' }),
}).meta({ description: 'A tool: what it does, its contract, and its arguments.' });

export const toolCatalogSchema = z.object({ tools: z.array(toolViewSchema) });
export type ToolView = z.infer<typeof toolViewSchema>;

export function toolCatalog(tools: readonly Tool[]): z.infer<typeof toolCatalogSchema> {
  return { tools: tools.map(toolView) };
}

function toolView(tool: Tool): ToolView {
  const { spec } = tool;
  return {
    name: tool.name,
    version: spec.version,
    description: spec.description,
    reversibility: spec.reversibility,
    provider: providerView(tool.provider),
    contract: spec,
    argsSchema: toolArgsJsonSchema(tool),
  };
}

function providerView(provider: ProviderSpec & { name: string }): z.infer<typeof providerViewSchema> {
  const values = Object.keys(provider.values ?? {});
  if (!isMcpProvider(provider)) return { kind: 'http', name: provider.name, baseUrl: withoutSecrets(provider.baseUrl), headers: Object.keys(provider.headers), values };
  const { mcp } = provider;
  return 'url' in mcp
    ? { kind: 'mcp', name: provider.name, transport: 'http', url: withoutSecrets(mcp.url), headers: Object.keys(mcp.headers), values }
    : { kind: 'mcp', name: provider.name, transport: 'stdio', command: mcp.command, headers: [], values };
}

/** A URL without user info, query or fragment (where a key could be written). */
function withoutSecrets(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(not a URL)';
  }
}
