import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { toolArgsJsonSchema } from '../../src/gateway/views/tool-args-schema.js';
import { effectdConfigSpec } from '../../src/config/tool-contract.js';
import { ToolRegistry } from '../../src/providers/tool-registry.js';

const tools = new ToolRegistry(effectdConfigSpec.parse({
  providers: { crm: { baseUrl: 'http://127.0.0.1:9' } },
  tools: [{
    name: 'crm.open', provider: 'crm', request: { path: '/t' }, target: '{args.subject}', reversibility: 'idempotent', idempotency: { kind: 'none' },
    args: {
      subject: { type: 'string', minLength: 3, maxLength: 20, pattern: '^[a-z ]+$', description: 'What it is about.' },
      priority: { type: 'enum', values: ['low', 'high'], default: 'low' },
      seats: { type: 'integer', min: 1, max: 9 },
      owner: { type: 'email' },
      price: { type: 'money', currencyField: 'currency' },
      currency: { type: 'currency' },
      notes: { type: 'text', optional: true, maxLength: 10 },
    },
  }],
}));
const tool = tools.get('crm.open')!;
const ajv = new Ajv2020({ strict: false });
(addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
const documented = ajv.compile(toolArgsJsonSchema(tool));

const valid = { subject: 'printer on fire', seats: 2, owner: 'ada@example.com', price: '49.00', currency: 'usd' };
const samples: Record<string, unknown>[] = [
  valid,
  { ...valid, priority: 'high', notes: 'short' },
  { ...valid, seats: '3' },
  { ...valid, priority: 'urgent' },
  { ...valid, seats: 0 },
  { ...valid, seats: 10 },
  { ...valid, subject: 'no' },
  { ...valid, subject: 'Has Capitals' },
  { ...valid, owner: 'not an address' },
  { ...valid, currency: 'dollars' },
  { ...valid, notes: 'far too long for it' },
  { ...valid, extra: true },
  { subject: 'printer on fire' },
];

describe('the JSON Schema of a tool\'s arguments (GET /v1/tools)', () => {
  it('never documents as valid what the tool\'s own schema refuses', () => {
    for (const sample of samples) {
      if (documented(sample)) expect(tool.schema.safeParse(sample).success, JSON.stringify(sample)).toBe(true);
    }
  });

  it('carries the declared bounds, values, formats and descriptions the input side of the schema loses', () => {
    expect(documented(valid)).toBe(true);
    expect(documented({ ...valid, seats: '3' })).toBe(true);
    for (const bad of samples.slice(3)) expect(documented(bad), JSON.stringify(bad)).toBe(false);
    const { properties, required } = toolArgsJsonSchema(tool) as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(properties.priority).toMatchObject({ enum: ['low', 'high'], default: 'low' });
    expect(properties.subject!.description).toBe('What it is about.');
    expect(properties.price!.description).toMatch(/minor units/);
    expect([...required].sort()).toEqual(['currency', 'owner', 'price', 'seats', 'subject']);
  });
});
