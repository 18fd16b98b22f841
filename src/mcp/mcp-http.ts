import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { asEffectdError, EffectdError } from '../core/errors.js';
import { callerOf, type Caller } from '../gateway/caller.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
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
export function mcpHttp(runtime: EffectdRuntime, options: McpHttpOptions): McpHttpMount {
  const loopback = isLoopbackHost(options.host);
  if (options.anonymousAgent && !loopback) {
    throw new EffectdError('invalid_config', `--mcp-anonymous-agent admits calls without credentials, so it only binds to loopback (127.0.0.1 or ::1), not ${options.host}`);
  }
  const fallback = options.identityFallback;
  const handler = createMcpHandler((ctx) => buildMcpServer(runtime, callerFrom(ctx.authInfo), {
    ...(fallback ? { identityFallback: fallback, fallbackInput: ctx.authInfo?.extra?.fallbackInput as FallbackInput | undefined ?? {} } : {}),
    ...(ctx.authInfo?.extra?.trace ? { transportTrace: ctx.authInfo.extra.trace as Record<string, string> } : {}),
  }), {
    onerror: (error) => runtime.logger.error({ event: 'McpError' }, `mcp: ${error.message}`),
  });
  const node = toNodeHandler(handler, { onerror: (error) => runtime.logger.error({ event: 'McpError' }, `mcp: ${error.message}`) });
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
    let caller: Caller;
    try {
      caller = authenticate(runtime, req, options.anonymousAgent === true);
    } catch (thrown) {
      const error = asEffectdError(thrown);
      sendJson(res, 401, { 'WWW-Authenticate': 'Bearer realm="effectd"' }, { jsonrpc: '2.0', id: null, error: { code: -32001, message: `unauthorized: ${error.message}` } });
      return;
    }
    const trace = traceHeaders(req);
    const auth: AuthInfo = { token: 'effectd', clientId: caller.name, scopes: [], extra: { caller, fallbackInput: fallbackInput(req, fallback), ...(trace ? { trace } : {}) } };
    void node(Object.assign(req, { auth }), res);
  };
  return { handle, close: () => handler.close() };
}

function authenticate(runtime: EffectdRuntime, req: IncomingMessage, anonymous: boolean): Caller {
  const header = req.headers.authorization;
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (header === undefined && anonymous && isLoopbackPeer(req.socket.remoteAddress)) {
    const agent = runtime.credentials.first('agent');
    if (!agent) throw new EffectdError('unauthorized', 'no agent credential to admit an anonymous local agent as');
    const { token: _token, ...principal } = agent;
    return callerOf(principal, 'mcp');
  }
  return runtime.gateway.authenticate(match?.[1], 'mcp');
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
