import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { rememberWrittenNumbers } from '../core/json-number-literals.js';
import type { EffectdApp } from '../runtime/compose.js';
import { AuthGuard } from './auth.guard.js';
import { consoleController } from './console-assets.js';
import { DecisionsController } from './decisions.controller.js';
import { DocsController } from './docs.controller.js';
import { SagasController } from './sagas.controller.js';
import { EffectsController } from './effects.controller.js';
import { EffectdErrorFilter, HttpBodyRefused } from './error-filter.js';
import { HealthController } from './health.controller.js';
import { MetaController } from './meta.controller.js';
import { GATEWAY, HEALTH, METRICS } from './tokens.js';
import { isMcpPath, mcpHttp, type McpHttpOptions } from '../mcp/mcp-http.js';
import { SessionController } from './session.controller.js';
import { ToolsController } from './tools.controller.js';
import { WorkflowsController } from './workflows.controller.js';
import { TraceContextInterceptor } from '../tracing/trace-context.interceptor.js';
import { tracingOn } from '../tracing/tracer.js';
import { loadSettings } from '../config/settings-loader.js';
import { EffectdError } from '../core/errors.js';

/** Every Nest controller of the HTTP ingress (test/unit/openapi-routes.unit.spec.ts checks the OpenAPI document against them). */
export const API_CONTROLLERS = [EffectsController, WorkflowsController, DecisionsController, SagasController, HealthController, SessionController, ToolsController, MetaController, DocsController];

@Module({})
class ApiModule {
  static forApp(app: EffectdApp): DynamicModule {
    return {
      module: ApiModule,
      // The console is no part of the API (the OpenAPI document does not list it).
      controllers: [...API_CONTROLLERS, consoleController()],
      // One provider per part: a controller receives only what it uses.
      providers: [{ provide: GATEWAY, useValue: app.gateway }, { provide: METRICS, useValue: app.metrics }, { provide: HEALTH, useValue: app.health }, AuthGuard],
    };
  }
}

export interface HttpServer {
  url: string;
  port: number;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /** Drains: refuses new connections, answers what was received, then resolves. */
  close(): Promise<void>;
}

/**
 * How long a client may take and how many connections it may hold (docs/http-api.md, "Limits"):
 * a slow or silent client gives up its connection instead of holding it for minutes. Settings.http
 * (EFFECTD_HTTP_*, checked by the settings loader).
 */
export interface HttpLimits {
  /** Time to receive the request headers (EFFECTD_HTTP_HEADERS_TIMEOUT_MS, default 10 s). */
  headersTimeoutMs: number;
  /** Time to receive the whole request, headers and body (EFFECTD_HTTP_REQUEST_TIMEOUT_MS, default 30 s). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open (EFFECTD_HTTP_KEEPALIVE_TIMEOUT_MS, default 5 s). */
  keepAliveTimeoutMs: number;
  /** Open connections at most; more are refused (EFFECTD_HTTP_MAX_CONNECTIONS, default 1024). */
  maxConnections: number;
  /** The largest request body, on /v1 and /mcp alike (EFFECTD_BODY_LIMIT_BYTES, default 1 MiB, the Kafka command limit too). */
  bodyLimitBytes?: number;
}

/** `application/json` or `application/*+json`, with no charset or UTF-8 (RFC 8259: JSON is UTF-8). */
function jsonContentType(header: string | undefined): 'json' | 'not-json' | 'not-utf8' {
  if (!header) return 'not-json';
  if (header === 'application/json') return 'json'; // what nearly every client sends: nothing to split
  const [essence = '', ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (essence !== 'application/json' && !/^application\/[a-z0-9!#$&^_.-]+\+json$/.test(essence)) return 'not-json';
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/^"|"$/g, '');
  return charset === undefined || charset === 'utf-8' || charset === 'utf8' ? 'json' : 'not-utf8';
}

/** A request carries a body when it is chunked or declares a non-zero length (an empty POST is no body). */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** 415 for a body that is not JSON (any method, any path, before routing): nothing else is parsed as if it were. */
function jsonBodiesOnly(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (!hasBody(request.raw)) return done();
  const type = request.headers['content-type'];
  const verdict = jsonContentType(type);
  if (verdict === 'json') return done();
  void reply.status(415).send({
    error: 'unsupported_media_type',
    message: verdict === 'not-utf8'
      ? `the request body must be JSON in UTF-8 (RFC 8259), not Content-Type "${type}": send Content-Type: application/json (charset=utf-8 or none)`
      : `the request body must be JSON: send it with Content-Type: application/json (or application/*+json), not ${type ? `"${type}"` : 'without a Content-Type'}`,
  });
}

/** 1 MB, as Express's body parser counted it ('1mb'): of the body as read, after any gzip or deflate. EFFECTD_BODY_LIMIT_BYTES changes it, for every door. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** A limit as people say it: "1 MB" for 1,048,576 bytes (as Express counted '1mb'), else its bytes. */
export function bodyLimitText(limit: number): string {
  return limit % (1024 * 1024) === 0 ? `${limit / (1024 * 1024)} MB` : limit % 1024 === 0 ? `${limit / 1024} kB` : `${limit} bytes`;
}

const tooLarge = (limit: number) => new HttpBodyRefused(413, { error: 'too_large', message: `the request body is over ${bodyLimitText(limit)} (EFFECTD_BODY_LIMIT_BYTES=${limit}); nothing was recorded` });

/** Strict UTF-8: invalid bytes throw (TextDecoder's default would replace them with U+FFFD). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Where the first invalid UTF-8 sequence starts (for the refusal's message). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let lo = 0;
  let hi = bytes.length;
  // The longest valid prefix, by halving (a fatal decoder only says yes or no).
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return lo;
}

/** The stream the body is read from: the request itself, or it inflated (gzip, deflate, br) as Express's body parser did. */
function bodyStream(req: IncomingMessage): IncomingMessage | Transform {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const inflate: Transform | null | undefined = encoding === 'identity' ? undefined
    : encoding === 'gzip' ? createGunzip()
      : encoding === 'deflate' ? createInflate()
        : encoding === 'br' ? createBrotliDecompress()
          : null;
  if (inflate === null) throw new HttpBodyRefused(415, { error: 'unsupported_media_type', message: `the request body could not be read: unsupported content encoding "${encoding}" (send UTF-8 JSON, uncompressed, gzip or deflate)` });
  if (inflate === undefined) return req;
  req.pipe(inflate);
  return inflate;
}

/**
 * Reads a JSON body (the 415 check let only JSON content types through). Any JSON value parses
 * (as Express's `strict: false`), so `null` or `5` is answered for what it is — not an object —
 * rather than "not valid JSON". The text is kept for one scan: how money numbers were written.
 */
function readJsonBody(limit: number) {
  return (request: FastifyRequest, _payload: unknown, done: (error: Error | null, body?: unknown) => void) => readJsonBodyUpTo(limit, request, done);
}

function readJsonBodyUpTo(limit: number, request: FastifyRequest, done: (error: Error | null, body?: unknown) => void): void {
  const req = request.raw;
  let stream: IncomingMessage | Transform;
  try {
    stream = bodyStream(req);
  } catch (error) {
    return done(error as Error);
  }
  // A declared length over the limit is refused before reading (a compressed one counts as inflated).
  if (stream === req && Number(req.headers['content-length'] ?? 0) > limit) return done(tooLarge(limit));
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (error: Error | null, body?: unknown) => {
    if (finished) return;
    finished = true;
    if (stream !== req) {
      req.unpipe(stream as Transform);
      stream.on('error', () => {});
      stream.destroy();
    }
    // What is left of the request (after a refusal, or past a compressed stream's end) is read off.
    if (error || stream !== req) req.resume();
    done(error, body);
  };
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) return finish(tooLarge(limit));
    chunks.push(chunk);
  });
  stream.on('error', (error: Error) => finish(new HttpBodyRefused(400, { error: 'bad_request', message: `the request body could not be read: ${error.message}` })));
  req.on('aborted', () => finish(new HttpBodyRefused(400, { error: 'bad_request', message: 'the request body could not be read: request aborted' })));
  stream.on('end', () => {
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    // JSON is UTF-8 (RFC 8259): bytes that are not are refused, never replaced with U+FFFD and acted on.
    let raw: string;
    try {
      raw = UTF8.decode(bytes);
    } catch {
      return finish(new HttpBodyRefused(400, { error: 'invalid_json', message: `the request body is not valid UTF-8 (byte ${firstInvalidUtf8(bytes)} starts an invalid sequence): send JSON encoded as UTF-8; nothing was recorded` }));
    }
    // As Express read it: a UTF-8 byte order mark is dropped, and a chunked body with no bytes is `{}`.
    const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    if (text.length === 0) return finish(null, hasBody(req) ? {} : undefined);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return finish(new HttpBodyRefused(400, { error: 'invalid_json', message: `the request body is not valid JSON: ${(error as Error).message}` }));
    }
    if (body !== null && typeof body === 'object') rememberWrittenNumbers(body, raw);
    finish(null, body);
  });
}

/** Starts the HTTP ingress (NestJS on Fastify) for one runtime; MCP and the drain gate sit on Node's HTTP server in front of it. */
export async function startHttpServer(runtime: EffectdApp, port: number, host = '127.0.0.1', limits: HttpLimits = loadSettings({}).http, mcpOptions: Omit<McpHttpOptions, 'host'> = {}): Promise<HttpServer> {
  const bodyLimit = limits.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  const mcp = mcpHttp(runtime, { host, bodyLimitBytes: bodyLimit, ...mcpOptions });
  const drain = drainGate();
  let server: Server | undefined;
  const adapter = new FastifyAdapter({
    // Node's server is effectd's own: every request passes the drain gate, and MCP (Streamable
    // HTTP) at /mcp is answered on Node's request and response — the SDK reads its own body.
    serverFactory: (fastify: (req: IncomingMessage, res: ServerResponse) => void) => {
      server = createServer((req: IncomingMessage, res: ServerResponse) => {
        // Every answer (API, /mcp, the drain's 503, a bad URL's 400): never sniffed as another type,
        // never cached (it carries tenants' data). A route that may be cached says so itself (the console's assets).
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Cache-Control', 'no-store');
        drain.admit(req, res, () => (isMcpPath(req.url) ? mcp.handle(req, res) : fastify(req, res)));
      });
      return server;
    },
    bodyLimit,
    // A URL the router cannot read (malformed percent-encoding, …) is answered in effectd's shape, not Fastify's.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      void reply.status(400).send({ error: 'bad_request', action: 'invalid_input', message: `the URL cannot be read: ${error.code === 'FST_ERR_BAD_URL' ? 'it has malformed percent-encoding (a % must start %XX of UTF-8 bytes; send a literal % as %25)' : error.message}; nothing was recorded` });
    },
    // The drain gate answers 503 itself (shutting_down); Fastify closes idle connections on close.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Routing as Express did: `/v1/effects/` and `/V1/Effects` are `/v1/effects` (parameters keep
    // their case), and route parameters are checked by the gateway (a 10 kB workflowId is its 400,
    // not the router's 414).
    routerOptions: { maxParamLength: 1 << 20, ignoreTrailingSlash: true, caseSensitive: false },
  });
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forApp(runtime), adapter, { bodyParser: false, logger: ['error', 'warn'] });
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', jsonBodiesOnly);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { bodyLimit }, readJsonBody(bodyLimit));
  app.useGlobalFilters(new EffectdErrorFilter(runtime.logger));
  // Handlers run in the caller's trace (its traceparent header) when traces are exported. Only
  // then: with no interceptor at all Nest calls a handler directly, without an RxJS pipeline per request.
  if (tracingOn()) app.useGlobalInterceptors(new TraceContextInterceptor());
  if (!server) throw new EffectdError('internal', 'effectd: the HTTP server was not created');
  const http = server;
  drain.attach(http, () => app.close());
  applyLimits(http, limits);
  await app.listen(port, host);
  const address = http.address() as { port: number };
  return { url: `http://${host}:${address.port}`, port: address.port, inFlight: drain.inFlight, close: async () => { await drain.close(); await mcp.close(); } };
}

/** Header, request (body) and keep-alive timeouts and a connection cap on Node's HTTP server. */
function applyLimits(server: import('node:http').Server, limits: HttpLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  // Node checks those timeouts every connectionsCheckingInterval (30 s by default, read when the
  // server starts listening): check often enough that a 10 s limit means about 10 s.
  (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.max(100, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4)));
}

/**
 * The HTTP half of a drain (no NestJS shutdown hooks: the start command owns the signals). Closing
 * refuses new connections, answers 503 to a request that arrives on an open keep-alive connection,
 * answers every request already received, and closes each connection as soon as it goes idle so
 * close() does not wait out the keep-alive timeout. On Node's server, so /mcp is gated too.
 */
function drainGate() {
  let closing = false;
  let inFlight = 0;
  let server: Server | undefined;
  let closeApp: () => Promise<void> = async () => {};
  const SHUTTING_DOWN = JSON.stringify({ error: 'shutting_down', message: 'effectd is shutting down; send the command again to another instance or after the restart (resending the same workflowId and step is safe)' });
  const admit = (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    if (closing) {
      req.resume();
      res.writeHead(503, { Connection: 'close', 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(SHUTTING_DOWN) });
      res.end(SHUTTING_DOWN);
      return;
    }
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (closing) setImmediate(() => server?.closeIdleConnections());
    });
    next();
  };
  const attach = (http: Server, close: () => Promise<void>) => {
    server = http;
    closeApp = close;
  };
  const close = async () => {
    closing = true;
    await closeApp();
  };
  return { admit, attach, inFlight: () => inFlight, close };
}
