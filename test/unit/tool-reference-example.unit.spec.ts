// docs/tool-reference.md can't rot: its complete example parses with the config schema and
// compiles into tools, and its "Contract fields" section names every field the schema has.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { argFieldSpec } from '../../src/core/arg-fields.js';
import { renderRequest } from '../../src/providers/provider-router.js';
import { effectdConfigSpec, idempotencySpec, lookupSpec, mcpCallSpec, mcpLookupSpec, mcpProviderSpec, toolContractSpec } from '../../src/config/tool-contract.js';
import { ToolRegistry } from '../../src/providers/tool-registry.js';

const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'tool-reference.md'), 'utf8');
const MARKER = '<!-- contract-example';

function example(): unknown {
  const at = doc.indexOf(MARKER);
  expect(at, `docs/tool-reference.md has no "${MARKER}" marker before its example`).toBeGreaterThanOrEqual(0);
  const block = /```json\n([\s\S]*?)\n```/.exec(doc.slice(at));
  expect(block, 'no ```json block after the marker').not.toBeNull();
  return JSON.parse(block![1]!);
}

function section(title: string): string {
  const start = doc.indexOf(`\n## ${title}\n`);
  expect(start, `docs/tool-reference.md has no "## ${title}" section`).toBeGreaterThanOrEqual(0);
  const next = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, next === -1 ? undefined : next);
}

/** The object schema inside optional/default wrappers. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  if (!(inner instanceof z.ZodObject)) throw new Error('not an object schema');
  return inner.shape as Record<string, z.ZodType>;
}

describe('docs/configuration.md', () => {
  it('the example tool under "Tools and their contracts" parses, compiles and declares its replayHeader', () => {
    const configuration = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
    const at = configuration.indexOf('\n## Tools and their contracts\n');
    expect(at).toBeGreaterThanOrEqual(0);
    const block = /```json\n([\s\S]*?)\n```/.exec(configuration.slice(at));
    const config = effectdConfigSpec.parse(JSON.parse(block![1]!.replaceAll('…', 'x')));
    const tool = new ToolRegistry(config).get('crm.create-ticket')!;
    expect(tool.spec.replayHeader).toBe('idempotent-replayed');
    expect(configuration.slice(at)).toContain('](tool-reference.md#contract-fields)');
  });
});

describe('docs/tool-reference.md', () => {
  it('the complete example is a config effectd accepts: it parses, and its tools compile', () => {
    const config = effectdConfigSpec.parse(example());
    const tools = new ToolRegistry(config);
    const charge = tools.get('billing.charge')!;
    expect(charge).toBeDefined();
    expect(charge.spec.replayHeader).toBe('idempotent-replayed');
    expect(charge.spec.lookup).toMatchObject({ by: 'reference', consistent: false });
    expect(charge.keyRetentionMs).toBe(86_400_000);
    expect(charge.spec.settleWindowMs).toBe(120_000);
    expect(charge.spec.resends).toEqual({ max: 3, withinMs: 3_600_000 });
    // What it sends for one call: the amount in minor units, the reference stamped into metadata, form-encoded.
    const args = charge.schema.parse({ invoiceId: 'INV-2291', customer: 'cus_1', amount: '49.00 USD' });
    const sent = renderRequest(charge, { args, providerKey: 'efd-k', reference: 'eff_1' });
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/charges', encoding: 'form' });
    expect(new URLSearchParams(sent.body).get('amount')).toBe('4900');
    expect(new URLSearchParams(sent.body).get('metadata[effectd_ref]')).toBe('eff_1');
    expect(new URLSearchParams(sent.body).get('metadata[invoice_id]')).toBe('INV-2291');
    // The undo names a tool of the same config.
    expect(tools.get(charge.spec.undo!.tool)).toBeDefined();
  });

  it('the example charge writes out every contract field', () => {
    const raw = example() as { tools: Record<string, unknown>[] };
    const charge = raw.tools.find((t) => t.name === 'billing.charge')!;
    // `mcp` is for tools of upstream MCP servers: "Upstream MCP servers" has its own example.
    expect(Object.keys(charge).sort()).toEqual(Object.keys(toolContractSpec.shape).filter((k) => k !== 'mcp').sort());
  });

  it('"Contract fields" explains every field of the schema, nested ones included', () => {
    const text = section('Contract fields');
    const named = (field: string) => text.includes(`**\`${field}\`**`);
    const fields = [
      ...Object.keys(toolContractSpec.shape).filter((k) => k !== 'mcp'),
      ...Object.keys(objectShape(toolContractSpec.shape.request)),
      ...Object.keys(objectShape(toolContractSpec.shape.resends)),
      ...idempotencySpec.options.filter((o) => o.shape.kind.value !== 'meta').flatMap((o) => Object.keys(o.shape)).filter((k) => k !== 'kind' && k !== 'field'),
      ...lookupSpec.options.flatMap((o) => Object.keys(o.shape)),
    ];
    const missing = [...new Set(fields)].filter((f) => !named(f));
    expect(missing, `fields without a **\`name\`** entry in "Contract fields": ${missing.join(', ')}`).toEqual([]);
    // Every argument type has a row.
    const types = argFieldSpec.options.map((o) => o.shape.type.value);
    expect(types.length).toBeGreaterThan(0);
    for (const type of types) expect(text).toContain(`| \`${type}\` |`);
  });
});

describe('docs/tool-reference.md, "Upstream MCP servers"', () => {
  const MCP_MARKER = '<!-- upstream-mcp-example';

  it('its example parses and compiles into an MCP tool', () => {
    const at = doc.indexOf(MCP_MARKER);
    expect(at, `no "${MCP_MARKER}" marker`).toBeGreaterThanOrEqual(0);
    const block = /```json\n([\s\S]*?)\n```/.exec(doc.slice(at));
    const tools = new ToolRegistry(effectdConfigSpec.parse(JSON.parse(block![1]!)));
    const charge = tools.get('upstream.charge')!;
    expect(charge.spec.mcp).toMatchObject({ tool: 'create_charge', lookup: { tool: 'search_charges' } });
    const sent = renderRequest(charge, { args: charge.schema.parse({ invoiceId: 'INV-1', amount: '49.00 USD' }), providerKey: 'efd-k', reference: 'eff_1' });
    expect(sent).toMatchObject({ method: 'MCP', path: 'create_charge' });
  });

  it('names every field of the MCP provider and the mcp block', () => {
    const text = section('Upstream MCP servers');
    const fields = [
      ...Object.keys(mcpCallSpec.shape),
      ...Object.keys(mcpLookupSpec.shape),
      ...mcpProviderSpec.shape.mcp.options.flatMap((o) => Object.keys(o.shape)),
      'mcp',
    ];
    const missing = [...new Set(fields)].filter((f) => !text.includes(`**\`${f}\`**`));
    expect(missing, `fields without a **\`name\`** entry in "Upstream MCP servers": ${missing.join(', ')}`).toEqual([]);
  });
});
