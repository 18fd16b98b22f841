import { describe, expect, it } from 'vitest';
import { toolCatalog, toolCatalogSchema } from '../../src/gateway/views/tool-catalog.js';
import { parseConfig } from '../../src/config/config-loader.js';
import { ToolRegistry } from '../../src/providers/tool-registry.js';

const upstream = (name: string, provider: string) => ({
  name, provider,
  mcp: { tool: 'create_charge', keyArgument: 'idempotency_key', receiptPath: 'structuredContent.id' },
  args: { invoiceId: { type: 'string', minLength: 1 } },
  target: 'invoice {args.invoiceId}', reversibility: 'idempotent',
  idempotency: { kind: 'meta', retentionMs: 86_400_000 },
});

const tools = new ToolRegistry(parseConfig({
  builtinTools: false,
  providers: {
    'pay-http': { mcp: { url: 'https://mcp-user:mcp-password@pay.example.com/mcp?token=query-token', headers: { Authorization: 'Bearer upstream-header-token' } }, values: { account: 'acct-value' } },
    'pay-stdio': { mcp: { command: 'node', args: ['server.mjs', '--api-key', 'argv-key'], env: { PAY_KEY: 'env-key' } } },
  },
  tools: [upstream('upstream.http-charge', 'pay-http'), upstream('upstream.stdio-charge', 'pay-stdio')],
}, 'test.json'));

describe('the tool catalog (GET /v1/tools) for upstream MCP providers', () => {
  const catalog = toolCatalog(tools.list());

  it('describes where a tool goes by names only: no header, value, argument, environment or URL secret', () => {
    const text = JSON.stringify(catalog);
    for (const secret of ['mcp-password', 'mcp-user', 'query-token', 'upstream-header-token', 'acct-value', 'argv-key', 'env-key', 'server.mjs']) expect(text).not.toContain(secret);
    expect(catalog.tools.map((t) => t.provider)).toEqual([
      { kind: 'mcp', name: 'pay-http', transport: 'http', url: 'https://pay.example.com/mcp', headers: ['Authorization'], values: ['account'] },
      { kind: 'mcp', name: 'pay-stdio', transport: 'stdio', command: 'node', headers: [], values: [] },
    ]);
  });

  it('answers in the shape the OpenAPI document gives it, with the contract as configured', () => {
    expect(toolCatalogSchema.safeParse(catalog).success).toBe(true);
    expect(catalog.tools[0]!.contract.mcp).toEqual({ tool: 'create_charge', keyArgument: 'idempotency_key', receiptPath: 'structuredContent.id' });
    expect(catalog.tools[0]!.argsSchema).toMatchObject({ type: 'object', required: ['invoiceId'], properties: { invoiceId: { type: 'string', minLength: 1 } } });
  });
});
