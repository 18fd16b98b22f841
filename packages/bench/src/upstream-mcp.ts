// The benchmark's upstream MCP server: a server written with the official server SDK around the
// simulated providers, the kind of third-party MCP server an agent calls directly. Each tool of the
// benchmark is an MCP tool (name with "." → "_") that sends the provider the very request effectd's
// contract would (provider-call.ts), with the idempotency key from `_meta`
// `dev.effectd/idempotencyKey` when a caller sends one (the `mcp-direct` baseline sends none: MCP has
// no key). A lost provider reply (a timeout, a dropped connection) destroys this server's HTTP reply
// too: the client sees a broken stream, as it would in front of a real server. (test/support has a
// hand-shaped fixture with create_charge/search_charges for the upstream-provider tests; the bench
// needs every workload tool, shaped by the contracts, and must not import from test/.)
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { serveMcpOnLoopback } from '../../../src/mcp/loopback-server.js';
import type { ToolRegistry } from '../../../src/providers/tool-registry.js';
import type { Send } from './policies/policy.js';
import { providerRequest, receiptOf } from './policies/provider-call.js';
import { CodedError } from '../../../src/shared/coded-error.js';

export const KEY_META = 'dev.effectd/idempotencyKey';

export interface BenchUpstreamMcp {
  url: string;
  /** tools/call requests received (re-issues included). */
  readonly calls: number;
  close(): Promise<void>;
}

export function upstreamToolName(tool: string): string {
  return tool.replaceAll('.', '_');
}

export async function startBenchUpstreamMcp(tools: ToolRegistry, names: string[], send: Send): Promise<BenchUpstreamMcp> {
  const reply = new AsyncLocalStorage<ServerResponse>();
  let calls = 0;
  const dropReply = (): never => {
    const res = reply.getStore();
    res?.destroy();
    res?.socket?.destroy();
    throw new CodedError('unavailable', 'the provider\'s reply was lost: this server\'s reply is lost too');
  };
  const build = () => {
    const server = new McpServer({ name: 'bench-upstream-providers', version: '1.0.0' });
    for (const name of names) {
      const tool = tools.get(name);
      if (!tool) continue;
      server.registerTool(upstreamToolName(name), {
        description: `${name} at the simulated provider (no ledger: each call is a request to the provider).`,
        inputSchema: z.looseObject({}),
      }, async (args, ctx): Promise<CallToolResult> => {
        calls += 1;
        const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
        const key = typeof meta?.[KEY_META] === 'string' ? (meta[KEY_META] as string) : null;
        // The caller's cancellation is not passed on: the provider completes what it received.
        const result = await providerRequest(tool, args as Record<string, unknown>, key, send, new AbortController().signal);
        if (result.kind === 'lost' || result.kind === 'cancelled') return dropReply();
        if (result.kind === 'not-sent') return { isError: true, content: [{ type: 'text', text: `could not connect to the provider (${result.error}); nothing was sent` }] };
        const body = JSON.stringify(result.body ?? '');
        if (result.status >= 200 && result.status < 300) {
          const receipt = receiptOf(tool, result.body);
          return { content: [{ type: 'text', text: `HTTP ${result.status}: ${body.slice(0, 160)}` }], structuredContent: { status: result.status, ...(receipt ? { receipt } : {}) } };
        }
        return { isError: true, content: [{ type: 'text', text: `the provider answered HTTP ${result.status}: ${body.slice(0, 160)}` }], structuredContent: { status: result.status } };
      });
    }
    return server;
  };
  const served = await serveMcpOnLoopback(build, reply);
  return {
    url: served.url,
    get calls() {
      return calls;
    },
    close: () => served.close(),
  };
}
