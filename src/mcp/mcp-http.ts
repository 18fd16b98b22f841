import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { asEffectdError, EffectdError } from '../core/errors.js';
import { bearerToken, callerOf, type Caller } from '../gateway/caller.js';
import type { EffectdApp } from '../runtime/compose.js';
import type { FallbackInput, IdentityFallback } from './identity.js';
import { buildMcpServer } from './mcp-server.js';

export interface McpHttpOptions {
  /** The address the HTTP server binds: loopback turns on DNS-rebinding protection (Host and Origin checks). */
  host: string;
  /**
   * Admit a call without credentials as the first agent credential (`--mcp-anonymous-agent`), for
   * local tools that cannot send a token (the conformance suite). Only on a loopback bind, and only
   * from a loopback peer; refused at start otherwise.
   */
  anonymousAgent?: boolean;
  /** The operator's fallback identity for clients that cannot set `_meta` (`--mcp-identity-fallback`); off when absent. */
  identityFallback?: IdentityFallback;
  /** The largest request body (EFFECTD_BODY_LIMIT_BYTES, the same as /v1's; default 1 MiB): larger is 413 before any JSON-RPC message is read. */
  bodyLimitBytes?: number;
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || host === '[::1]';
}

function isLoopbackPeer(address: string | undefined): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}

export interface McpHttpMount {
  /** Answers one request to /mcp on Node's own request and response (the body is unread: the SDK reads it). */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

/** `/mcp`, `/mcp/…` or `/mcp?…` (any case, as Express mounted it): the requests the MCP endpoint answers. */
export function isMcpPath(url: string | undefined): boolean {
  if (url === undefined || url.length < 4) return false;
  const end = url.search(/[?#]/);
  const path = (end === -1 ? url : url.slice(0, end)).toLowerCase();
  return path === '/mcp' || path.startsWith('/mcp/');
}

function sendJson(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Streamable HTTP at `/mcp`, stateless, for 2026-07-28 clients and (through the SDK's stateless
 * fallback) 2025-era ones. The SDK reads its own body, so this is mounted on Node's HTTP server, ahead
 * of the Nest (Fastify) application and its JSON body parser. The caller comes from the same bearer credentials as /v1 (`gateway.authenticate`):
 * a missing or unknown token is HTTP 401 before any JSON-RPC message is read.
 */
export function mcpHttp(runtime: EffectdApp, options: McpHttpOptions): McpHttpMount {
  const loopback = isLoopbackHost(options.host);
  if (options.anonymousAgent && !loopback) {
    throw new EffectdError('invalid_config', `--mcp-anonymous-agent admits calls without credentials, so it only binds to loopback (127.0.0.1 or ::1), not ${options.host}`);
  }
  const fallback = options.identityFallback;
  // One body limit for every door: the SDK's own default (4 MiB) would let /mcp take what /v1 refuses.
  const bodyLimit = options.bodyLimitBytes ?? 1024 * 1024;
  const handler = createMcpHandler((ctx) => buildMcpServer(runtime, callerFrom(ctx.authInfo), {
    ...(fallback ? { identityFallback: fallback, fallbackInput: ctx.authInfo?.extra?.fallbackInput as FallbackInput | undefined ?? {} } : {}),
    ...(ctx.authInfo?.extra?.trace ? { transportTrace: ctx.authInfo.extra.trace as Record<string, string> } : {}),
  }), {
    onerror: (error) => runtime.logger.error({ event: 'McpError' }, `mcp: ${error.message}`),
    maxRequestBodySize: bodyLimit,
  });
  const node = toNodeHandler(handler, { onerror: (error) => runtime.logger.error({ event: 'McpError' }, `mcp: ${error.message}`), maxRequestBodySize: bodyLimit });
  const validHost = loopback ? hostHeaderValidation(LOOPBACK_HOSTS) : undefined;
  const validOrigin = loopback ? originValidation(LOOPBACK_HOSTS) : undefined;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (validHost && !validHost(req, res)) return;
    if (validOrigin && !validOrigin(req, res)) return;
    // Stateless Streamable HTTP takes POST only. Every other method is refused here, as the SDK
    // refuses GET or DELETE: it cannot even build a fetch Request for TRACE or CONNECT (a 500).
    if (req.method !== 'POST') {
      sendJson(res, 405, { Allow: 'POST' }, { jsonrpc: '2.0', id: null, error: { code: -32000, message: `Method not allowed: ${req.method} (MCP here is stateless Streamable HTTP: send POST)` } });
      return;
    }
    if (Number(req.headers['content-length'] ?? 0) > bodyLimit) {
      req.resume();
      sendJson(res, 413, { Connection: 'close' }, { jsonrpc: '2.0', id: null, error: { code: -32600, message: `the request body is over ${bodyLimit} bytes (EFFECTD_BODY_LIMIT_BYTES, the same limit as /v1); nothing was recorded` } });
      return;
    }
    try {
      bearerToken(req.rawHeaders);
    } catch (thrown) {
      req.resume();
      sendJson(res, 400, {}, { jsonrpc: '2.0', id: null, error: { code: -32600, message: (thrown as Error).message } });
      return;
    }
    let caller: Caller;
    try {
      caller = authenticate(runtime, req, options.anonymousAgent === true);
    } catch (thrown) {
      const error = asEffectdError(thrown);
      sendJson(res, 401, { 'WWW-Authenticate': 'Bearer realm="effectd"' }, { jsonrpc: '2.0', id: null, error: { code: -32001, message: `unauthorized: ${error.message}` } });
      return;
    }
    noStore(res);
    const trace = traceHeaders(req);
    const auth: AuthInfo = { token: 'effectd', clientId: caller.name, scopes: [], extra: { caller, fallbackInput: fallbackInput(req, fallback), ...(trace ? { trace } : {}) } };
    void readBody(req, bodyLimit).then((body) => {
      if (body === 'too_large') {
        sendJson(res, 413, { Connection: 'close' }, { jsonrpc: '2.0', id: null, error: { code: -32600, message: `the request body is over ${bodyLimit} bytes (EFFECTD_BODY_LIMIT_BYTES, the same limit as /v1); nothing was recorded` } });
        return;
      }
      if (!isUtf8(body)) {
        sendJson(res, 400, {}, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the request body is not valid UTF-8 (JSON is UTF-8): nothing was done; send it encoded as UTF-8' } });
        return;
      }
      // The SDK reads the very bytes received (its own JSON parsing and errors), from this buffer.
      const replay = { method: req.method, url: req.url, headers: req.headers, auth, async *[Symbol.asyncIterator]() { yield body; } };
      return node(replay, res);
    }, (error: unknown) => {
      if (!res.headersSent) sendJson(res, 400, {}, { jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: the request body could not be read: ${(error as Error).message}` } });
    });
  };
  return { handle, close: () => handler.close() };
}

function authenticate(runtime: EffectdApp, req: IncomingMessage, anonymous: boolean): Caller {
  const header = req.headers.authorization;
  // From the raw headers: two Authorization headers were refused already (handle), never first-wins.
  const token = bearerToken(req.rawHeaders);
  if (header === undefined && anonymous && isLoopbackPeer(req.socket.remoteAddress)) {
    const agent = runtime.credentials.first('agent');
    if (!agent) throw new EffectdError('unauthorized', 'no agent credential to admit an anonymous local agent as');
    const { token: _token, ...principal } = agent;
    return callerOf(principal, 'mcp');
  }
  return runtime.gateway.authenticate(token, 'mcp');
}

/** The request body, up to `limit` bytes (more: 'too_large', the rest read off and dropped). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? 'too_large' : Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}

/**
 * MCP's answers are never cached, as the API's (src/api/http-server.ts): the SDK writes its own
 * `Cache-Control: no-cache, no-transform` (for SSE), which becomes `no-store, no-transform`.
 */
function noStore(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  (res as { writeHead: (...args: unknown[]) => ServerResponse }).writeHead = (...args: unknown[]) => {
    const headers = args[args.length - 1];
    if (headers && typeof headers === 'object' && !Array.isArray(headers)) {
      for (const name of Object.keys(headers)) if (name.toLowerCase() === 'cache-control') delete (headers as Record<string, unknown>)[name];
      (headers as Record<string, unknown>)['Cache-Control'] = 'no-store, no-transform';
    }
    return writeHead(...args);
  };
  res.setHeader('Cache-Control', 'no-store, no-transform');
}

/** The request's W3C trace context headers, if it has a traceparent (a call's `_meta` names its own first). */
function traceHeaders(req: IncomingMessage): Record<string, string> | undefined {
  const { traceparent, tracestate } = req.headers;
  if (typeof traceparent !== 'string') return undefined;
  return { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) };
}

/** The configured identity headers of this request, for the header fallback (nothing otherwise). */
function fallbackInput(req: IncomingMessage, fallback: IdentityFallback | undefined): FallbackInput {
  if (fallback?.mode !== 'header') return {};
  const one = (name: string) => {
    const value = req.headers[name];
    const text = Array.isArray(value) ? value[0] : value;
    return text === undefined || text.trim() === '' ? undefined : text.trim();
  };
  const workflowId = one(fallback.workflowHeader);
  const step = one(fallback.stepHeader);
  return { headers: { ...(workflowId !== undefined ? { workflowId } : {}), ...(step !== undefined ? { step } : {}) } };
}

function callerFrom(auth: AuthInfo | undefined): Caller {
  const caller = auth?.extra?.caller as Caller | undefined;
  if (!caller) throw new EffectdError('unauthorized', 'an MCP request reached the server without an authenticated caller');
  return caller;
}
