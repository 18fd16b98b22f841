import { EffectdError } from '../core/errors.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Server, type CallToolResult, type ListToolsResult } from '@modelcontextprotocol/server';

/**
 * `effectd mcp --url …/mcp --token …`: a stdio MCP server that forwards to a running effectd's
 * Streamable HTTP endpoint, for desktop and CLI agents that speak only stdio. It holds no ledger of
 * its own: `tools/list` is the remote's list, `tools/call` goes to the remote with the caller's
 * `_meta` unchanged (the effect's identity, `dev.effectd/*`, and any other key), so the remote
 * ledger decides, exactly as for a client that connects to /mcp itself. Only the protocol's own
 * per-hop keys (`io.modelcontextprotocol/*`, `progressToken`) are the hop's and are not forwarded.
 * A cancelled call (the stdio client's `notifications/cancelled`) aborts the forwarded request,
 * which never cancels an effect already dispatched: the next call for it gets the settled answer.
 */
export interface RemoteMcp {
  client: Client;
  url: string;
  close(): Promise<void>;
}

const VERSION = '0.1.0';

/** Connects to a running effectd's /mcp with a bearer token (a wrong token fails here: HTTP 401). */
export async function connectRemote(url: string, token: string | undefined): Promise<RemoteMcp> {
  const client = new Client({ name: 'effectd-mcp-stdio-forwarder', version: VERSION });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  } catch (error) {
    throw new EffectdError('unavailable', `could not connect to the effectd MCP endpoint ${url}: ${(error as Error).message}${token ? '' : ' (no --token or EFFECTD_TOKEN given)'}`, {}, { cause: error });
  }
  return { client, url, close: () => client.close() };
}

/** The caller's `_meta` as forwarded: everything but the protocol's per-hop keys. */
export function forwardedMeta(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!meta) return undefined;
  const kept = Object.fromEntries(Object.entries(meta).filter(([key]) => !key.startsWith('io.modelcontextprotocol/') && key !== 'progressToken'));
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** One stdio server that proxies tools/list and tools/call to the remote effectd. */
export function buildProxyServer(remote: RemoteMcp): Server {
  const instructions = remote.client.getInstructions();
  const server = new Server({ name: 'effectd', version: VERSION }, { capabilities: { tools: {} }, ...(instructions ? { instructions } : {}) });
  server.setRequestHandler('tools/list', async (request): Promise<ListToolsResult> => {
    const cursor = request.params?.cursor;
    const listed = await remote.client.listTools(cursor !== undefined ? { cursor } : undefined);
    return { tools: listed.tools, ...(listed.nextCursor !== undefined ? { nextCursor: listed.nextCursor } : {}) };
  });
  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
    const meta = forwardedMeta(request.params._meta as Record<string, unknown> | undefined);
    try {
      return (await remote.client.callTool(
        { name: request.params.name, ...(request.params.arguments !== undefined ? { arguments: request.params.arguments } : {}), ...(meta ? { _meta: meta } : {}) },
        { signal: ctx.mcpReq.signal },
      )) as CallToolResult;
    } catch (error) {
      if (ctx.mcpReq.signal.aborted) throw error;
      // The answer was lost between here and effectd: whether the effect was recorded is not known
      // here, but the remote ledger knows. A protocol error (not a tool result a model reads as
      // "failed") tells the harness to re-issue the call with the same _meta, which is safe.
      throw new EffectdError('unavailable', `the call reached effectd at ${remote.url} or not, its answer was lost (${(error as Error).message}): re-issue the same call with the same _meta identity; effectd's ledger answers it (a replay or the effect's state), never a second effect`, {}, { cause: error });
    }
  });
  return server;
}
