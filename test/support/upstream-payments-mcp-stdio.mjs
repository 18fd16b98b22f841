// The upstream payments MCP server of upstream-payments-mcp.ts, over stdio (plain JS, so effectd
// can start it as a child process with `node`): create_charge and search_charges around the
// payments simulator at UPSTREAM_PAYMENTS_URL. With UPSTREAM_DIE_AFTER_CHARGE naming a file that
// exists, the next create_charge removes the file, charges, and the process exits before
// replying: the caller loses the reply of a committed charge.
import { existsSync, rmSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const paymentsUrl = process.env.UPSTREAM_PAYMENTS_URL;
if (!paymentsUrl) throw new Error('UPSTREAM_PAYMENTS_URL is required');
const dieMarker = process.env.UPSTREAM_DIE_AFTER_CHARGE;
const KEY_META = 'dev.effectd/idempotencyKey';
const auth = { authorization: 'Bearer sk_test_effectd' };

function build() {
  const server = new McpServer({ name: 'upstream-payments-stdio', version: '1.0.0' });
  server.registerTool('create_charge', {
    description: 'Create a charge at the payments provider.',
    inputSchema: z.object({
      amount: z.number().int().positive(),
      currency: z.string().length(3),
      description: z.string().optional(),
      reference: z.string().min(1),
      idempotency_key: z.string().optional(),
    }),
    annotations: { readOnlyHint: true, idempotentHint: true },
  }, async (args, ctx) => {
    const meta = ctx.mcpReq._meta;
    const key = typeof meta?.[KEY_META] === 'string' ? meta[KEY_META] : args.idempotency_key;
    const res = await fetch(`${paymentsUrl}/v1/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth, ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify({ amount: args.amount, currency: args.currency, ...(args.description ? { description: args.description } : {}), metadata: { effectd_ref: args.reference } }),
    });
    const body = await res.json();
    if (res.ok && dieMarker && existsSync(dieMarker)) {
      rmSync(dieMarker);
      process.exit(3);
    }
    if (!res.ok) return { isError: true, content: [{ type: 'text', text: `the provider refused the charge (HTTP ${res.status}): ${JSON.stringify(body)}` }] };
    const charge = { id: String(body.id), amount: Number(body.amount), currency: String(body.currency) };
    return { content: [{ type: 'text', text: JSON.stringify(charge) }], structuredContent: charge };
  });
  server.registerTool('search_charges', {
    description: 'Search charges by the caller\'s reference.',
    inputSchema: z.object({ reference: z.string().min(1) }),
    annotations: { readOnlyHint: true },
  }, async (args) => {
    const query = `metadata['effectd_ref']:'${args.reference}'`;
    const res = await fetch(`${paymentsUrl}/v1/charges/search?query=${encodeURIComponent(query)}`, { headers: auth });
    const body = await res.json();
    if (!res.ok) return { isError: true, content: [{ type: 'text', text: `search failed (HTTP ${res.status})` }] };
    const charges = (body.data ?? []).map((c) => ({ id: c.id, amount: c.amount, reference: c.metadata.effectd_ref }));
    return { content: [{ type: 'text', text: JSON.stringify({ charges }) }], structuredContent: { charges } };
  });
  return server;
}

serveStdio(build, { onerror: (error) => console.error(`upstream-payments-stdio: ${error.message}`) });
process.stdin.on('end', () => process.exit(0));
