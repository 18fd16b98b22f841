// The MCP conformance suite's fixture tools, as an upstream MCP server effectd carries as a provider
// (test/fixtures/mcp-conformance.config.json). The suite calls them by fixed names and checks their
// answers through effectd's /mcp. Ported to the official server SDK v2 from the suite's reference
// server, examples/servers/typescript/everything-server.ts in github.com/modelcontextprotocol/conformance
// (0.2.0-alpha.11, MIT License, Copyright (c) Anthropic, PBC): the names, texts, media and progress
// steps are the reference's; only the tools a gateway can carry are here (tools that ask the client
// for input, log, or expect every call to be made a task are not: conformance/mcp-expected-failures.yaml
// says why). `greet`, the Tasks scenarios' sync-only tool, follows their description (src/scenarios/server/tasks).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { serveMcpOnLoopback } from '../../src/mcp/loopback-server.js';

/** A 1×1 red PNG and a minimal WAV, as the reference server sends them. */
export const TEST_IMAGE_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
export const TEST_AUDIO_BASE64 = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const noArgs = z.object({});
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Each fixture tool: its name, description and result (the progress tool also notifies). */
const FIXED: Record<string, { description: string; result: CallToolResult }> = {
  test_simple_text: {
    description: 'Tests simple text content response',
    result: { content: [{ type: 'text', text: 'This is a simple text response for testing.' }] },
  },
  test_image_content: {
    description: 'Tests image content response',
    result: { content: [{ type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' }] },
  },
  test_audio_content: {
    description: 'Tests audio content response',
    result: { content: [{ type: 'audio', data: TEST_AUDIO_BASE64, mimeType: 'audio/wav' }] },
  },
  test_embedded_resource: {
    description: 'Tests embedded resource content response',
    result: { content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }] },
  },
  test_multiple_content_types: {
    description: 'Tests response with multiple content types (text, image, resource)',
    result: {
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
      ],
    },
  },
};

export const FIXTURE_ERROR_TEXT = 'This tool intentionally returns an error for testing';

function build(): McpServer {
  const server = new McpServer({ name: 'mcp-conformance-fixture', version: '1.0.0' });
  for (const [name, { description, result }] of Object.entries(FIXED)) {
    server.registerTool(name, { description, inputSchema: noArgs }, async () => result);
  }
  server.registerTool('test_error_handling', { description: 'Tests error response handling', inputSchema: noArgs }, async (): Promise<CallToolResult> => ({
    isError: true, content: [{ type: 'text', text: FIXTURE_ERROR_TEXT }],
  }));
  // 0, 50 and 100 of 100, ~50 ms apart, to the caller's progressToken (none: just the delays).
  server.registerTool('test_tool_with_progress', { description: 'Tests tool that reports progress notifications', inputSchema: noArgs }, async (_args, ctx): Promise<CallToolResult> => {
    const progressToken = (ctx.mcpReq._meta as { progressToken?: string | number } | undefined)?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (progressToken !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` } });
      if (progress < 100) await pause(50);
    }
    return { content: [{ type: 'text', text: String(progressToken ?? 0) }] };
  });
  // The Tasks scenarios' sync-only tool (SEP-2663; the suite's scenarios name it, its reference server has no tasks fixtures yet).
  server.registerTool('greet', { description: 'Greets by name (sync-only)', inputSchema: z.object({ name: z.string() }) }, async ({ name }): Promise<CallToolResult> => ({
    content: [{ type: 'text', text: `Hello, ${name}!` }],
  }));
  return server;
}

export interface ConformanceFixtureServer {
  url: string;
  close(): Promise<void>;
}

/** The fixture tools at /mcp on a free loopback port (stateless Streamable HTTP). */
export function startConformanceFixtureServer(): Promise<ConformanceFixtureServer> {
  return serveMcpOnLoopback(build, new AsyncLocalStorage<ServerResponse>());
}
