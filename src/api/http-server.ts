import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';
import { rememberWrittenNumbers } from '../core/json-number-literals.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { AuthGuard } from './auth.guard.js';
import { consoleRouter } from './console-assets.js';
import { DecisionsController } from './decisions.controller.js';
import { DocsController } from './docs.controller.js';
import { SagasController } from './sagas.controller.js';
import { EffectsController } from './effects.controller.js';
import { EffectdErrorFilter } from './error-filter.js';
import { HealthController } from './health.controller.js';
import { RUNTIME } from './runtime.token.js';
import { mcpHttp, type McpHttpOptions } from '../mcp/mcp-http.js';
import { SessionController } from './session.controller.js';
import { ToolsController } from './tools.controller.js';
import { WorkflowsController } from './workflows.controller.js';
import { TraceContextInterceptor } from '../tracing/trace-context.interceptor.js';

/** Every Nest controller of the HTTP ingress (test/unit/openapi-routes.unit.spec.ts checks the OpenAPI document against them). */
export const API_CONTROLLERS = [EffectsController, WorkflowsController, DecisionsController, SagasController, HealthController, SessionController, ToolsController, DocsController];

@Module({})
class ApiModule {
  static forRuntime(runtime: EffectdRuntime): DynamicModule {
    return {
      module: ApiModule,
      controllers: API_CONTROLLERS,
      providers: [{ provide: RUNTIME, useValue: runtime }, AuthGuard],
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
 * a slow or silent client gives up its connection instead of holding it for minutes.
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
}

const LIMIT_ENV: Record<keyof HttpLimits, [string, number]> = {
  headersTimeoutMs: ['EFFECTD_HTTP_HEADERS_TIMEOUT_MS', 10_000],
  requestTimeoutMs: ['EFFECTD_HTTP_REQUEST_TIMEOUT_MS', 30_000],
  keepAliveTimeoutMs: ['EFFECTD_HTTP_KEEPALIVE_TIMEOUT_MS', 5_000],
  maxConnections: ['EFFECTD_HTTP_MAX_CONNECTIONS', 1_024],
};

/** The HTTP limits from the environment, with their defaults; a value that is not a positive integer stops the start. */
export function httpLimits(env: NodeJS.ProcessEnv = process.env): HttpLimits {
  const limits = {} as HttpLimits;
  for (const [field, [name, fallback]] of Object.entries(LIMIT_ENV) as [keyof HttpLimits, [string, number]][]) {
    const raw = env[name];
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, not "${raw}"`);
    limits[field] = value;
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new Error(`EFFECTD_HTTP_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed EFFECTD_HTTP_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs}): the request timeout covers the headers too`);
  }
  return limits;
}

/** `application/json` or `application/*+json`, with no charset or UTF-8 (RFC 8259: JSON is UTF-8). */
function jsonContentType(header: string | undefined): 'json' | 'not-json' | 'not-utf8' {
  if (!header) return 'not-json';
  const [essence = '', ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (essence !== 'application/json' && !/^application\/[a-z0-9!#$&^_.-]+\+json$/.test(essence)) return 'not-json';
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/^"|"$/g, '');
  return charset === undefined || charset === 'utf-8' || charset === 'utf8' ? 'json' : 'not-utf8';
}

/** A request carries a body when it is chunked or declares a non-zero length (an empty POST is no body). */
function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** 415 for a body that is not JSON: nothing else is parsed as if it were. */
function jsonBodiesOnly(req: Request, res: Response, next: NextFunction): void {
  if (!hasBody(req)) return next();
  const type = req.headers['content-type'];
  const verdict = jsonContentType(type);
  if (verdict === 'json') return next();
  res.status(415).json({
    error: 'unsupported_media_type',
    message: verdict === 'not-utf8'
      ? `the request body must be JSON in UTF-8 (RFC 8259), not Content-Type "${type}": send Content-Type: application/json (charset=utf-8 or none)`
      : `the request body must be JSON: send it with Content-Type: application/json (or application/*+json), not ${type ? `"${type}"` : 'without a Content-Type'}`,
  });
}

/** Starts the HTTP ingress (NestJS on Express) for one runtime. */
export async function startHttpServer(runtime: EffectdRuntime, port: number, host = '127.0.0.1', limits: HttpLimits = httpLimits(), mcpOptions: Omit<McpHttpOptions, 'host'> = {}): Promise<HttpServer> {
  const mcp = mcpHttp(runtime, { host, ...mcpOptions });
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRuntime(runtime), { bodyParser: false, logger: ['error', 'warn'] });
  const drain = drainGate(app);
  app.use(drain.middleware);
  // MCP (Streamable HTTP) at /mcp: the SDK reads its own body, so it comes before the JSON parser (src/mcp/).
  app.use('/mcp', mcp.middleware);
  app.use(jsonBodiesOnly);
  // Any JSON value parses (strict: false), so `null` or `5` is answered for what it is — not an
  // object — rather than "not valid JSON". The text is kept for one scan: how money numbers were written.
  app.use(express.json({ limit: '1mb', strict: false, type: () => true, verify: (req, _res, buf) => void ((req as Request & { jsonText?: Buffer }).jsonText = buf) }));
  app.use((req: Request & { jsonText?: Buffer }, _res: Response, next: NextFunction) => {
    if (req.jsonText && req.body !== null && typeof req.body === 'object') rememberWrittenNumbers(req.body, req.jsonText.toString('utf8'));
    delete req.jsonText;
    next();
  });
  app.use((error: { type?: string; message?: string; status?: number }, _req: Request, res: Response, next: NextFunction) => {
    if (error?.type === 'entity.parse.failed') {
      res.status(400).json({ error: 'invalid_json', message: `the request body is not valid JSON: ${error.message}` });
      return;
    }
    if (error?.type === 'entity.too.large') {
      res.status(413).json({ error: 'too_large', message: 'the request body is over 1 MB' });
      return;
    }
    if (error?.type === 'encoding.unsupported' || error?.type === 'charset.unsupported') {
      res.status(415).json({ error: 'unsupported_media_type', message: `the request body could not be read: ${error.message} (send UTF-8 JSON, uncompressed, gzip or deflate)` });
      return;
    }
    if (typeof error?.status === 'number' && error.status >= 400 && error.status < 500 && error.type) {
      res.status(error.status).json({ error: 'bad_request', message: `the request body could not be read: ${error.message}` });
      return;
    }
    next(error);
  });
  app.use(consoleRouter());
  app.useGlobalFilters(new EffectdErrorFilter(runtime.logger));
  // Handlers run in the caller's trace (its traceparent header) when traces are exported.
  app.useGlobalInterceptors(new TraceContextInterceptor());
  applyLimits(app.getHttpServer(), limits);
  await app.listen(port, host);
  const address = app.getHttpServer().address() as { port: number };
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
 * close() does not wait out the keep-alive timeout.
 */
function drainGate(app: NestExpressApplication) {
  let closing = false;
  let inFlight = 0;
  const server = app.getHttpServer();
  const middleware = (_req: Request, res: Response, next: NextFunction) => {
    if (closing) {
      res.set('connection', 'close').status(503).json({ error: 'shutting_down', message: 'effectd is shutting down; send the command again to another instance or after the restart (resending the same workflowId and step is safe)' });
      return;
    }
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    next();
  };
  const close = async () => {
    closing = true;
    await app.close();
  };
  return { middleware, inFlight: () => inFlight, close };
}
