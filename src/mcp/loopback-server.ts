import type { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type McpServer } from '@modelcontextprotocol/server';

/**
 * An MCP server (built per request, stateless) on a free loopback port at /mcp, for the servers
 * effectd's tests and benchmark stand up around simulated providers. `reply` carries each request's
 * HTTP response to its tool handlers, so a handler can drop the reply (a broken stream).
 */
export async function serveMcpOnLoopback(build: () => McpServer, reply: AsyncLocalStorage<ServerResponse>): Promise<{ url: string; close(): Promise<void> }> {
  const handler = createMcpHandler(() => build(), { onerror: () => undefined });
  const node = toNodeHandler(handler, { onerror: () => undefined });
  const http = createServer((req, res) => {
    if (req.url !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    void reply.run(res, () => node(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await handler.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
