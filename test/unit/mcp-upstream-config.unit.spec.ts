// Upstream MCP servers as providers: the config shape, the errors a mistake gets at load, and the
// recorded tools/call (what a same-key resend sends again).
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config-loader.js';
import { renderRequest } from '../../src/providers/provider-router.js';
import { ToolRegistry } from '../../src/providers/tool-registry.js';

const charge = (patch: Record<string, unknown> = {}) => ({
  name: 'upstream.charge',
  provider: 'pay-mcp',
  mcp: {
    tool: 'create_charge',
    arguments: { amount: '{args.amount}', currency: '{args.currency}', description: 'invoice {args.invoiceId}' },
    keyArgument: 'idempotency_key',
    referenceArgument: 'reference',
    receiptPath: 'structuredContent.id',
    lookup: { tool: 'search_charges', arguments: { reference: '{ref}' }, resultsPath: 'structuredContent.charges', receiptPath: 'id' },
  },
  args: { invoiceId: { type: 'string', minLength: 1 }, amount: { type: 'money', currencyField: 'currency' }, currency: { type: 'currency', default: 'usd' } },
  target: 'invoice {args.invoiceId}',
  reversibility: 'compensable',
  idempotency: { kind: 'meta', retentionMs: 86_400_000 },
  ...patch,
});

const config = (tool: Record<string, unknown>, provider: unknown = { mcp: { url: 'http://127.0.0.1:7000/mcp' } }) =>
  parseConfig({ builtinTools: false, providers: { 'pay-mcp': provider, http: { baseUrl: 'http://127.0.0.1:4242' } }, tools: [tool] }, 'test.json');
const registry = (tool: Record<string, unknown>, provider?: unknown) => new ToolRegistry(config(tool, provider));

describe('upstream MCP providers in the config', () => {
  it('accepts a Streamable HTTP URL or a stdio command, and HTTP providers stay as they were', () => {
    const parsed = config(charge(), { mcp: { url: 'http://127.0.0.1:7000/mcp', headers: { authorization: 'Bearer x' } } });
    expect(parsed.providers['pay-mcp']).toEqual({ mcp: { url: 'http://127.0.0.1:7000/mcp', headers: { authorization: 'Bearer x' } }, values: {} });
    expect(parsed.providers.http).toEqual({ baseUrl: 'http://127.0.0.1:4242', headers: {}, values: {} });
    expect(config(charge(), { mcp: { command: 'node', args: ['server.mjs'] } }).providers['pay-mcp']).toEqual({ mcp: { command: 'node', args: ['server.mjs'] }, values: {} });
  });

  it('a malformed provider is reported against the shape it meant', () => {
    expect(() => config(charge(), { mcp: { url: 'not a url' } })).toThrow(/field "providers.pay-mcp.mcp.url"/);
    expect(() => config(charge(), { mcp: { port: 1 } })).toThrow(/providers.pay-mcp.mcp": an MCP provider is \{ "url"/);
    expect(() => config(charge(), { baseUrl: 'nope' })).toThrow(/field "providers.pay-mcp.baseUrl"/);
    expect(() => config(charge(), { mcp: { url: 'http://x/mcp' }, baseUrl: 'http://x' })).toThrow(/providers.pay-mcp/);
  });

  it('compiles the contract: the lookup tool is the reconcile policy, the scope names the upstream tool', () => {
    const tool = registry(charge()).get('upstream.charge')!;
    expect(tool.policy).toMatchObject({ lookup: 'reference', lookupConsistent: false, dedupesByKey: true });
    expect(tool.keyRetentionMs).toBe(86_400_000);
    expect(tool.scope(tool.schema.parse({ invoiceId: 'I', amount: 100 }))).toMatchObject({ provider: 'pay-mcp', endpoint: 'MCP create_charge' });
    expect(tool.classification.receiptPath).toBe('structuredContent.id');
  });

  it('records the tools/call a resend sends again: the arguments with the reference and the key stamped in', () => {
    const tool = registry(charge()).get('upstream.charge')!;
    const args = tool.schema.parse({ invoiceId: 'INV-1', amount: '49.00 USD' });
    const sent = renderRequest(tool, { args, providerKey: 'efd-key', reference: 'eff_ref' });
    expect(sent).toMatchObject({ method: 'MCP', path: 'create_charge', encoding: 'json' });
    expect(JSON.parse(sent.body)).toEqual({ amount: 4900, currency: 'usd', description: 'invoice INV-1', reference: 'eff_ref', idempotency_key: 'efd-key' });
  });

  it.each([
    ['an MCP tool on an HTTP provider', charge({ provider: 'http' }), /field "mcp" is for tools of an upstream MCP server, but provider "http" is an HTTP provider/],
    ['an HTTP tool on an MCP provider', { ...charge({ request: { path: '/v1/charges' } }), mcp: undefined }, /field "mcp" is missing: provider "pay-mcp" is an upstream MCP server/],
    ['both request and mcp', charge({ request: { path: '/v1/charges' } }), /field "request" does not apply to a tool of an upstream MCP server/],
    ['an HTTP key kind', charge({ idempotency: { kind: 'header', retentionMs: 1000 } }), /field "idempotency.kind" must be "meta"/],
    ['an HTTP reference', charge({ reference: { kind: 'body-path', path: 'metadata.ref' } }), /field "reference" does not apply .* mcp.referenceArgument/],
    ['an HTTP lookup', charge({ lookup: { by: 'reference', path: '/x?q={ref}', resultsPath: 'data' } }), /field "lookup" does not apply .* mcp.lookup/],
    ['a top-level receiptPath', charge({ receiptPath: 'id' }), /field "receiptPath" does not apply .* mcp.receiptPath/],
    ['a key argument without a key', charge({ idempotency: { kind: 'none' } }), /field "mcp.keyArgument" needs a key/],
    ['a lookup by reference with no reference argument', charge({ mcp: { ...charge().mcp, referenceArgument: undefined } }), /field "mcp.lookup.by" is "reference", but the reference is stamped nowhere/],
    ['a lookup that does not place the reference', charge({ mcp: { ...charge().mcp, lookup: { ...charge().mcp.lookup, arguments: { reference: 'x' } } } }), /field "mcp.lookup.arguments" must place \{ref\}/],
    ['the mutating tool as its own lookup', charge({ mcp: { ...charge().mcp, lookup: { ...charge().mcp.lookup, tool: 'create_charge' } } }), /field "mcp.lookup.tool" is the mutating tool/],
    ['a typo in an argument template', charge({ mcp: { ...charge().mcp, arguments: { amount: '{args.amout}' } } }), /field "mcp.arguments" uses \{args.amout\}/],
    ['"meta" keys on an HTTP tool', { ...charge({ provider: 'http', request: { path: '/v1/charges' } }), mcp: undefined }, /field "idempotency.kind" "meta" .* is for upstream MCP servers/],
  ])('refuses %s with the field it is about', (_, tool, message) => {
    expect(() => registry(JSON.parse(JSON.stringify(tool)) as Record<string, unknown>)).toThrow(message);
  });
});
