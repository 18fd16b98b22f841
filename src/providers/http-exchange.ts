import { Pool, type Dispatcher } from 'undici';
import type { DispatchResult } from '../core/dispatch-result.js';
import { traceHttpCall } from '../tracing/index.js';
import { responseOf } from './http-response.js';

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
 *
 * Over undici's connection pools rather than node:http's agent: about half the client CPU per
 * request (measured, 16 at a time on loopback: 82–87 → 47–52 µs), which is most of what effectd
 * spends on a provider call. undici never retries a request itself (a POST is not idempotent to
 * it), and drops an idle connection before the server's keep-alive timeout (from the server's
 * `Keep-Alive: timeout=` hint, else after 4 s, before a Node server's default 5 s): a request
 * written to a connection the server is closing would come back reset, an ambiguous answer
 * (unknown) for a request the provider never saw.
 */
export function httpExchange(request: HttpRequest): Promise<DispatchResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const url = parsedUrl(request.url);
  // With traces exported: the request carries the active span's traceparent (an attempt's, a check's).
  const traced = traceHttpCall(url, request.method, request.headers);
  const headers = withUrlCredentials(traced?.headers ?? request.headers, url);
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, request.timeoutMs);
  const lost = (error: string): DispatchResult => ({ kind: 'lost', error: timedOut ? `timeout after ${request.timeoutMs} ms` : error, latencyMs: elapsed() });
  const result = poolFor(url)
    .request({ path: url.pathname + url.search, method: request.method as Dispatcher.HttpMethod, headers, body: request.body ?? null, signal: abort.signal })
    .then(
      // Object.assign, not a spread: a spread adding members costs microseconds on Node 20 (see settle in src/core/fold.ts).
      async (res) => Object.assign({ kind: 'response' as const }, await responseOf(res), { latencyMs: elapsed() }),
      // No answer: only a connection that never opened proves the request never left.
      (error: Thrown): DispatchResult => (!timedOut && (error.code === 'ECONNREFUSED' || error.code === 'ENOTFOUND') ? { kind: 'not-sent', error: error.code, latencyMs: elapsed() } : lost(socketCode(error))),
    )
    // The answer's body broke off.
    .catch((error: Thrown) => lost(`response broken: ${socketCode(error)}`));
  return result.then((answer) => {
    clearTimeout(timer);
    traced?.done(answer);
    return answer;
  });
}

/** What undici rejects with: a Node error (an errno or UND_ERR code, maybe a cause), or an abort's DOMException. */
type Thrown = { code?: unknown; message?: unknown; cause?: unknown };

/**
 * An errno code when the socket gave one (undici wraps a closed socket as UND_ERR_SOCKET), else the
 * message. A code need not be a string: an aborted request's DOMException has a number.
 */
function socketCode(error: Thrown): string {
  const { code } = error;
  const causeCode = (error.cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && !code.startsWith('UND_ERR')) return code;
  if (typeof causeCode === 'string' && /^E[A-Z]+$/.test(causeCode)) return causeCode;
  return code === 'UND_ERR_SOCKET' ? 'ECONNRESET' : String(error.message);
}

/** `user:password@` of a provider URL as a Basic authorization header (a header the provider's config sets wins). */
function withUrlCredentials(headers: Record<string, string>, url: URL): Record<string, string> {
  if ((!url.username && !url.password) || Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) return headers;
  const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  return { ...headers, authorization: `Basic ${basic}` };
}

const POOL_OPTIONS = { connections: 256, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 } as const;
const MAX_POOLS = 256;

/** One pool per origin (a provider's base URL has one); bounded: the oldest is closed when full. */
const pools = new Map<string, Pool>();
function poolFor(url: URL): Pool {
  let pool = pools.get(url.origin);
  if (!pool) {
    if (pools.size >= MAX_POOLS) {
      const [oldest, oldPool] = pools.entries().next().value!;
      pools.delete(oldest);
      void oldPool.close().catch(() => {});
    }
    pool = new Pool(url.origin, POOL_OPTIONS);
    pools.set(url.origin, pool);
  }
  return pool;
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
