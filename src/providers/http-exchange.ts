import http from 'node:http';
import https from 'node:https';
import type { DispatchResult } from '../core/dispatch-result.js';
import { traceHttpCall } from '../tracing/index.js';
import { readResponse } from './http-response.js';

// Idle sockets are dropped after 4 s, before a Node server's default 5 s keep-alive timeout closes
// them: a request written to a socket the server is closing comes back ECONNRESET, an ambiguous
// answer (unknown) for a request the provider never saw.
const agentOptions = { keepAlive: true, maxSockets: 256, timeout: 4_000 };
const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

/**
 * One HTTP exchange, never retried. A refused connection is `not-sent` (the request provably never
 * left); anything after the connection opened without a full answer is `lost`.
 */
export function httpExchange(request: HttpRequest): Promise<DispatchResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  return new Promise((resolve) => {
    const url = parsedUrl(request.url);
    const client = url.protocol === 'https:' ? https : http;
    // With traces exported: the request carries the active span's traceparent (an attempt's, a check's).
    const traced = traceHttpCall(url, request.method, request.headers);
    const headers = traced?.headers ?? request.headers;
    let settled = false;
    const finish = (result: DispatchResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      traced?.done(result);
      resolve(result);
    };
    // Options, not the URL: Node would convert a URL into these on every request.
    const req = client.request({
      protocol: url.protocol,
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      ...(url.username || url.password ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
      method: request.method,
      headers: request.body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(request.body).toString() },
      agent: agents[url.protocol as 'http:' | 'https:'],
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ kind: 'lost', error: `timeout after ${request.timeoutMs} ms`, latencyMs: elapsed() });
    }, request.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOTFOUND') finish({ kind: 'not-sent', error: error.code, latencyMs: elapsed() });
      else finish({ kind: 'lost', error: error.code ?? error.message, latencyMs: elapsed() });
    });
    req.on('response', (res) => readResponse(
      res,
      (response) => finish({ kind: 'response', ...response, latencyMs: elapsed() }),
      (error) => finish({ kind: 'lost', error, latencyMs: elapsed() }),
    ));
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });
}

/** Parsed provider URLs (a provider's few paths, parsed once; URL is read-only here). Bounded: cleared when full. */
const parsed = new Map<string, URL>();
function parsedUrl(raw: string): URL {
  let url = parsed.get(raw);
  if (!url) {
    if (parsed.size >= 1_000) parsed.clear();
    url = new URL(raw);
    parsed.set(raw, url);
  }
  return url;
}
