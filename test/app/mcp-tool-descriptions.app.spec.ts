// What a model reads in tools/list agrees with what the door accepts: every example in every tool's
// inputSchema (the `examples` keyword, and each JSON literal after "e.g." in a description) is fed
// through the validator the door uses for that tool (the contract's zod schema as the shell parses
// it, the saga's input schema, the repeat argument's, the read tools' own) and must be accepted;
// a description whose "e.g." is not a JSON literal fails too (a model copies what it reads).
import { Client, InMemoryTransport, type Tool as McpTool } from '@modelcontextprotocol/client';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMinorUnits, AMOUNT_TEXT_PATTERN } from '../../src/core/money.js';
import { buildMcpServer } from '../../src/mcp/mcp-server.js';
import { contractToolName, HISTORY_TOOL, SAGA_PREFIX, STATUS_TOOL } from '../../src/mcp/names.js';
import { REPEAT_ARGUMENT, repeatArgumentSchema } from '../../src/mcp/repeat-argument.js';
import { memoryApp, type MemoryApp } from '../support/memory-app.js';

type Schema = Record<string, unknown>;

/** Each JSON literal after "e.g." in a description, up to ")", ";" or the end; anything else there is a failure to report. */
function describedExamples(description: string): { examples: unknown[]; unreadable: string[] } {
  const examples: unknown[] = [];
  const unreadable: string[] = [];
  for (const match of description.matchAll(/e\.g\.\s+([^);]+)/g)) {
    const list = match[1]!.trim().replace(/\.$/, '');
    // Split on commas and " or " outside quoted strings.
    for (const piece of list.match(/"(?:[^"\\]|\\.)*"|[^,"]+/g)!.flatMap((p) => (p.startsWith('"') ? [p] : p.split(/\s+or\s+/))).map((p) => p.trim()).filter(Boolean)) {
      try {
        examples.push(JSON.parse(piece));
      } catch {
        unreadable.push(piece);
      }
    }
  }
  return { examples, unreadable };
}

/** Every example a property offers: its `examples`, and those of its description. */
function propertyExamples(property: Schema): { examples: unknown[]; unreadable: string[] } {
  const described = typeof property.description === 'string' ? describedExamples(property.description) : { examples: [], unreadable: [] };
  return { examples: [...((property.examples as unknown[] | undefined) ?? []), ...described.examples], unreadable: described.unreadable };
}

describe('tools/list: every example in every inputSchema is accepted by the door\'s validator', () => {
  let memory: MemoryApp;
  let client: Client;
  let tools: McpTool[];

  beforeAll(async () => {
    memory = memoryApp();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    // The default door: content identity, so each tool also advertises the repeat argument.
    await buildMcpServer(memory.app, memory.caller('agent', 'mcp'), { identityFallback: { mode: 'content', windowMs: 3_600_000 } }).connect(serverSide);
    client = new Client({ name: 'descriptions', version: '1.0.0' });
    await client.connect(clientSide);
    tools = (await client.listTools()).tools;
  });
  afterAll(async () => {
    await client?.close();
    await memory?.close();
  });

  /** The validator the door uses for one argument of one tool: true when the value is accepted in an otherwise valid call. */
  const validator = (tool: McpTool): ((args: Record<string, unknown>) => z.ZodSafeParseResult<unknown>) => {
    if (tool.name === STATUS_TOOL || tool.name === HISTORY_TOOL) return (args) => ({ success: true, data: args }) as never;
    if (tool.name.startsWith(SAGA_PREFIX)) {
      const saga = memory.app.sagas.get(tool.name.slice(SAGA_PREFIX.length))!;
      return (args) => (saga.input as z.ZodType).safeParse(args);
    }
    const contract = memory.app.tools.get(contractToolName(tool.name))!;
    return (args) => {
      const { [REPEAT_ARGUMENT]: repeat, ...rest } = args;
      if (repeat !== undefined && !repeatArgumentSchema.safeParse(repeat).success) return repeatArgumentSchema.safeParse(repeat);
      return contract.schema.safeParse(rest);
    };
  };

  it('lists the contracts\' tools, the sagas and the read tools, each contract tool with the repeat argument', () => {
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['payments_charge', 'email_send', 'travel_hold-flight', STATUS_TOOL, HISTORY_TOOL]));
    expect(names.some((n) => n.startsWith(SAGA_PREFIX))).toBe(true);
    expect(tools.find((t) => t.name === 'payments_charge')!.inputSchema.properties).toHaveProperty(REPEAT_ARGUMENT);
  });

  it('every example of every property, in a call otherwise made of each required property\'s first example, is accepted', () => {
    const refused: string[] = [];
    let checked = 0;
    for (const tool of tools) {
      if (tool.name === STATUS_TOOL || tool.name === HISTORY_TOOL) continue;
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, Schema>;
      const required = (tool.inputSchema.required ?? []) as string[];
      const examples = Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, propertyExamples(p)]));
      for (const [name, { unreadable }] of Object.entries(examples)) {
        for (const piece of unreadable) refused.push(`${tool.name}.${name}: "e.g. ${piece}" is not a JSON literal a model could send`);
      }
      // A base call from the first example of each required property; one without an example is made up by the test below.
      const base: Record<string, unknown> = {};
      for (const name of required) {
        const first = examples[name]?.examples[0];
        base[name] = first !== undefined ? first : fill(properties[name]!);
      }
      const validate = validator(tool);
      const baseResult = validate(base);
      if (!baseResult.success) refused.push(`${tool.name}: the call made of its examples ${JSON.stringify(base)} is refused: ${baseResult.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      for (const [name, { examples: values }] of Object.entries(examples)) {
        for (const value of values) {
          checked += 1;
          const result = validate({ ...base, [name]: value });
          if (!result.success) refused.push(`${tool.name}.${name}: example ${JSON.stringify(value)} is refused: ${result.error.issues.map((i) => i.message).join('; ')}`);
        }
      }
    }
    expect(refused).toEqual([]);
    // Not vacuous: the amount's, the flight's, the journal's and the repeat argument's examples at least.
    expect(checked).toBeGreaterThan(20);
  });

  it('the amount: its examples are one amount, and what the string branch\'s pattern refuses the validator refuses too', () => {
    const amount = (tools.find((t) => t.name === 'payments_charge')!.inputSchema.properties as Record<string, Schema>).amount!;
    const { examples, unreadable } = propertyExamples(amount);
    expect(unreadable).toEqual([]);
    expect(examples).toContain(4900);
    expect(new Set(examples.map((e) => (parseMinorUnits(e, 'usd') as { minor?: number }).minor))).toEqual(new Set([4900]));
    // "4900" as a string is what the old description invited, and is refused: neither offered nor matched.
    expect(examples).not.toContain('4900');
    const pattern = new RegExp(AMOUNT_TEXT_PATTERN);
    for (const text of ['4900', '49', ' 49 ', 'USD 49.00 USD', 'lots', '49,00', '$49', '49.00', '49.00 USD', 'USD 49', '49usd', ' 0.50 eur ']) {
      if (!pattern.test(text)) expect(parseMinorUnits(text, 'usd').ok, text).toBe(false);
      else expect(parseMinorUnits(text, 'usd').ok, text).toBe(true);
    }
  });
});

/** A value for a required property with no example: the first enum value, a pattern's obvious match, or a word. */
function fill(property: Schema): unknown {
  if (Array.isArray(property.enum)) return property.enum[0];
  const pattern = typeof property.pattern === 'string' ? property.pattern : '';
  if (pattern.includes('\\d{4}-\\d{2}-\\d{2}')) return '2026-03-14';
  if (pattern.includes('\\d{4}-')) return '2026-03';
  if (pattern.startsWith('^ch_')) return 'ch_1';
  if (pattern.startsWith('^fh_')) return 'fh_1';
  if (pattern.startsWith('^hb_')) return 'hb_1';
  if (pattern.startsWith('^i-')) return 'i-1';
  if (property.format === 'email') return 'ada@example.com';
  if (Array.isArray(property.anyOf) || property.type === 'integer' || property.type === 'number') return 1;
  if (property.type === 'object') {
    const properties = (property.properties ?? {}) as Record<string, Schema>;
    return Object.fromEntries(((property.required ?? []) as string[]).map((name) => [name, fill(properties[name]!)]));
  }
  return 'x';
}
