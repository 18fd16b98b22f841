import type { CallToolResult, ContentBlock, McpServer, RegisteredTool, ServerContext, StandardSchemaWithJSON, ToolAnnotations } from '@modelcontextprotocol/server';
import { deriveReference } from '../core/identity.js';
import type { Tool } from '../gateway/views/tool-catalog.js';
import { observeCalls, type CallObserver } from '../shared/call-observer.js';

/**
 * What an upstream MCP server says while a call of one of its tools is dispatched for this
 * request, relayed to the MCP client that is waiting for the answer:
 * - its `notifications/progress`, to the client's own `progressToken` (when it sent one), for any
 *   contract's tool, while the call runs inside the answer budget;
 * - for a `read` contract answered `done`, the upstream result's content blocks (text, image,
 *   audio, embedded resources) after effectd's own text: the data read is the answer. A tool that
 *   changes the world is answered with its outcome and receipt only.
 * Both come only with the answer to the call that dispatched: an answer from the ledger (a replay,
 * an effect settled later or by another instance) carries effectd's outcome alone, since the ledger
 * records the outcome and the receipt, not what the upstream displayed.
 */
export async function relayingUpstream(ctx: ServerContext, tool: Tool, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  const progressToken = (ctx.mcpReq._meta as { progressToken?: unknown } | undefined)?.progressToken;
  const contents = new Map<string, readonly unknown[]>();
  const observer: CallObserver = {
    ...(typeof progressToken === 'string' || typeof progressToken === 'number'
      ? { progress: (update) => void ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, ...update } }).catch(() => undefined) }
      : {}),
    ...(tool.spec.reversibility === 'read' ? { answered: (reference, content) => contents.set(reference, content) } : {}),
  };
  return withUpstreamContent(await observeCalls(observer, run), contents);
}

/** A `done` answer with the content its own dispatch got from the upstream appended (nothing else changes). */
export function withUpstreamContent(result: CallToolResult, contents: ReadonlyMap<string, readonly unknown[]>): CallToolResult {
  const outcome = result.structuredContent as { status?: unknown; effectId?: unknown } | undefined;
  if (result.isError === true || outcome?.status !== 'done' || typeof outcome.effectId !== 'string') return result;
  const upstream = contents.get(deriveReference(outcome.effectId));
  if (!upstream || upstream.length === 0) return result;
  return { ...result, content: [...result.content, ...(upstream as ContentBlock[])] };
}

type Args = Record<string, unknown>;

/** What registering a contract's tool takes (src/mcp/mcp-server.ts): its schemas are effectd's JSON Schemas. */
export interface RelayingRegistrar {
  registerTool(name: string, config: { title?: string; description?: string; inputSchema: StandardSchemaWithJSON<Args, Args>; outputSchema?: StandardSchemaWithJSON; annotations?: ToolAnnotations; _meta?: Record<string, unknown> }, cb: (args: Args, ctx: ServerContext) => Promise<CallToolResult>): RegisteredTool;
}

/** `server.registerTool` for a contract's tool, its handler run inside the relay of its upstream calls (relayingUpstream). */
export function relayFor(server: McpServer, tool: Tool): RelayingRegistrar {
  return { registerTool: (name, config, cb) => server.registerTool(name, config, (args, ctx) => relayingUpstream(ctx, tool, () => cb(args, ctx))) };
}
