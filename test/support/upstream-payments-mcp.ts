// An upstream MCP server written with the official server SDK around the payments simulator: the
// kind of third-party MCP server effectd sits in front of as a provider. `create_charge` charges
// at the simulator (the idempotency key from `_meta` "dev.effectd/idempotencyKey" or the
// `idempotency_key` argument, the reference in metadata.effectd_ref); `search_charges` is the
// simulator's search by metadata['effectd_ref']. Its annotations lie on purpose (a charge that
// claims to be read-only and idempotent): effectd must go by its contract, not by these.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { serveMcpOnLoopback } from '../../src/mcp/loopback-server.js';

export interface UpstreamPaymentsMcpOptions {
  /** The payments simulator's base URL. */
  paymentsUrl: string;
  /** Wait this long (real time) inside create_charge before charging: a window to kill the caller mid-call. */
  delayMs?: number;
  /** Drop the reply of the next N create_charge calls after the charge committed (the HTTP response is destroyed). */
  dropRepliesAfterCharge?: number;
}

export interface UpstreamPaymentsMcp {
  url: string;
  /** create_charge calls received so far (including dropped ones), with the key and the reference they carried. */
  calls: { tool: string; arguments: Record<string, unknown>; meta: Record<string, unknown> | undefined }[];
  /** Change the faults between calls. */
  set(options: Partial<Omit<UpstreamPaymentsMcpOptions, 'paymentsUrl'>>): void;
  close(): Promise<void>;
}

export const KEY_META = 'dev.effectd/idempotencyKey';

export async function startUpstreamPaymentsMcp(options: UpstreamPaymentsMcpOptions): Promise<UpstreamPaymentsMcp> {
  const state = { delayMs: options.delayMs ?? 0, dropRepliesAfterCharge: options.dropRepliesAfterCharge ?? 0 };
  const calls: UpstreamPaymentsMcp['calls'] = [];
  const reply = new AsyncLocalStorage<ServerResponse>();
  /** Destroys the HTTP exchange this tool call arrived on: the caller sees a dropped stream, never a result. */
  const dropReply = (): never => {
    reply.getStore()?.destroy();
    reply.getStore()?.socket?.destroy();
    throw new Error('reply dropped on purpose');
  };

  const build = () => {
    const server = new McpServer({ name: 'upstream-payments', version: '1.0.0' });
    server.registerTool('create_charge', {
      description: 'Create a charge at the payments provider.',
      inputSchema: z.object({
        amount: z.number().int().positive().describe('minor units'),
        currency: z.string().length(3),
        description: z.string().optional(),
        reference: z.string().min(1).describe('the caller\'s reference, stored in metadata.effectd_ref'),
        idempotency_key: z.string().optional(),
      }),
      // Untrusted hints, wrong on purpose.
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false },
    }, async (args, ctx): Promise<CallToolResult> => {
      const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
      calls.push({ tool: 'create_charge', arguments: args, meta });
      if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
      const key = typeof meta?.[KEY_META] === 'string' ? (meta[KEY_META] as string) : args.idempotency_key;
      let res: Response;
      try {
        res = await fetch(`${options.paymentsUrl}/v1/charges`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk_test_effectd', ...(key ? { 'idempotency-key': key } : {}) },
          body: JSON.stringify({ amount: args.amount, currency: args.currency, ...(args.description ? { description: args.description } : {}), metadata: { effectd_ref: args.reference } }),
        });
      } catch {
        // The provider's reply was lost (the simulator's drop-after-mutation): this server's reply is lost too.
        return dropReply();
      }
      const body = (await res.json()) as Record<string, unknown>;
      if (res.ok && state.dropRepliesAfterCharge > 0) {
        state.dropRepliesAfterCharge -= 1;
        return dropReply();
      }
      if (!res.ok) return { isError: true, content: [{ type: 'text', text: `the provider refused the charge (HTTP ${res.status}): ${JSON.stringify(body)}` }] };
      const charge = { id: String(body.id), amount: Number(body.amount), currency: String(body.currency), status: String(body.status ?? 'succeeded') };
      return { content: [{ type: 'text', text: JSON.stringify(charge) }], structuredContent: charge };
    });
    server.registerTool('search_charges', {
      description: 'Search charges by the caller\'s reference.',
      inputSchema: z.object({ reference: z.string().min(1) }),
      annotations: { readOnlyHint: true },
    }, async (args): Promise<CallToolResult> => {
      const query = `metadata['effectd_ref']:'${args.reference}'`;
      const res = await fetch(`${options.paymentsUrl}/v1/charges/search?query=${encodeURIComponent(query)}`, { headers: { authorization: 'Bearer sk_test_effectd' } });
      const body = (await res.json()) as { data?: { id: string; amount: number; metadata: Record<string, string> }[] };
      if (!res.ok) return { isError: true, content: [{ type: 'text', text: `search failed (HTTP ${res.status})` }] };
      const charges = (body.data ?? []).map((c) => ({ id: c.id, amount: c.amount, reference: c.metadata.effectd_ref }));
      return { content: [{ type: 'text', text: JSON.stringify({ charges }) }], structuredContent: { charges } };
    });
    return server;
  };

  const served = await serveMcpOnLoopback(build, reply);
  return {
    url: served.url,
    calls,
    set: (next) => Object.assign(state, next),
    close: () => served.close(),
  };
}
